/** A JSON object (not null, not an array): what a parsed `{…}` is. */
export const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
