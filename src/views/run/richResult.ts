// An external tool's exact result (an MCP CallToolResult, kept in a blob) as the tool card shows
// it: text, images (raster formats only, as data the webview's CSP allows), resources, links and
// structured content. vscode-free; the webview checks an image again before it draws it (safeImage.ts).
import * as z from 'zod';
import { count } from '../../common/format';
import { compactJson, cut, FIELD_MAX_CHARS, JSON_MAX_DEPTH, LIST_MAX, prettyJson, TEXT_MAX_CHARS } from './bounds';
import { isSafeImage, MAX_IMAGE_BASE64, SAFE_IMAGE } from './safeImage';

export const RichPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({
    type: z.literal('image'),
    mimeType: z.string().regex(SAFE_IMAGE),
    data: z.string().max(MAX_IMAGE_BASE64),
  }),
  z.object({ type: z.literal('media'), mimeType: z.string(), bytes: z.number().int().nonnegative() }),
  z.object({
    type: z.literal('resource'),
    uri: z.string(),
    mimeType: z.string().nullable(),
    text: z.string().nullable(),
    bytes: z.number().int().nullable(),
  }),
  z.object({ type: z.literal('link'), uri: z.string(), name: z.string(), description: z.string().nullable() }),
]);
export type RichPart = z.infer<typeof RichPart>;

export const RichResult = z.object({
  parts: z.array(RichPart),
  /** The structured content, as indented JSON. */
  structured: z.string().nullable(),
  isError: z.boolean(),
});
export type RichResult = z.infer<typeof RichResult>;

type Loose = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const bytesOf = (base64: string) => Math.floor((base64.replace(/=+$/, '').length * 3) / 4);

/**
 * The card's view of a stored result (`text`, as kept); anything unexpected is shown as text, never
 * dropped. Cut to what the card shows: its first parts, each text to its bound, and structured
 * content nested too deep for printing as the raw result.
 */
export function richResult(raw: unknown, text: string): RichResult {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Loose;
  const content = Array.isArray(r.content) ? (r.content as unknown[]) : [];
  const parts = content.slice(0, LIST_MAX).map(part);
  if (content.length > LIST_MAX)
    parts.push({ type: 'text', text: `… (${count(content.length - LIST_MAX)} more parts not shown)` });
  const structured =
    r.structuredContent === undefined
      ? null
      : (prettyJson(r.structuredContent, { maxChars: TEXT_MAX_CHARS })?.text ??
        `(nested more than ${JSON_MAX_DEPTH} levels deep: the result as kept)\n${cut(text, TEXT_MAX_CHARS)}`);
  return { parts, structured, isError: r.isError === true };
}

function part(p: unknown): RichPart {
  const o = (typeof p === 'object' && p !== null ? p : {}) as Loose;
  const data = str(o.data) ?? '';
  switch (o.type) {
    case 'text':
      return { type: 'text', text: cut(str(o.text) ?? '', TEXT_MAX_CHARS) };
    case 'image': {
      const mimeType = str(o.mimeType) ?? '';
      if (isSafeImage(mimeType, data)) return { type: 'image', mimeType, data };
      return { type: 'media', mimeType, bytes: bytesOf(data) };
    }
    case 'audio':
      return { type: 'media', mimeType: str(o.mimeType) ?? '', bytes: bytesOf(data) };
    case 'resource': {
      const res = (typeof o.resource === 'object' && o.resource !== null ? o.resource : {}) as Loose;
      const blob = str(res.blob);
      return {
        type: 'resource',
        uri: str(res.uri) ?? '',
        mimeType: str(res.mimeType),
        text: res.text === undefined ? null : cut(str(res.text) ?? '', TEXT_MAX_CHARS),
        bytes: blob === null ? null : bytesOf(blob),
      };
    }
    case 'resource_link':
      return { type: 'link', uri: str(o.uri) ?? '', name: str(o.name) ?? '', description: str(o.description) };
    default:
      return { type: 'text', text: cut(compactJson(p) ?? `(a part nested too deep to print)`, FIELD_MAX_CHARS) };
  }
}
