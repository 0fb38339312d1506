// An external tool's exact result (an MCP CallToolResult, kept in a blob) as the tool card shows
// it: text, images (raster formats only, as data the webview's CSP allows), resources, links and
// structured content. vscode-free; the webview checks an image again before it draws it (safeImage.ts).
import * as z from 'zod';
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

/** The card's view of a stored result; anything unexpected is shown as text, never dropped. */
export function richResult(raw: unknown): RichResult {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Loose;
  const content = Array.isArray(r.content) ? (r.content as unknown[]) : [];
  return {
    parts: content.map(part),
    structured: r.structuredContent === undefined ? null : JSON.stringify(r.structuredContent, null, 2),
    isError: r.isError === true,
  };
}

function part(p: unknown): RichPart {
  const o = (typeof p === 'object' && p !== null ? p : {}) as Loose;
  const data = str(o.data) ?? '';
  switch (o.type) {
    case 'text':
      return { type: 'text', text: str(o.text) ?? '' };
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
        text: str(res.text),
        bytes: blob === null ? null : bytesOf(blob),
      };
    }
    case 'resource_link':
      return { type: 'link', uri: str(o.uri) ?? '', name: str(o.name) ?? '', description: str(o.description) };
    default:
      return { type: 'text', text: JSON.stringify(p) };
  }
}
