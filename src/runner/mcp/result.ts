// An MCP tool result (text, images, audio, resources, resource links, structured content, isError)
// → what the model reads (text: a chat tool message holds nothing else) and, stored exactly beside
// it, the result itself as JSON in a blob for the tool card and the record.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { capOutput, truncationNote } from '../tools/output';
import type { LargeResult } from './intake';
import type { ToolContext, ToolOutput } from '../tools/types';

type Part = CallToolResult['content'][number];

/** The text the model gets for a result. */
export function resultText(r: CallToolResult): string {
  const parts = (r.content ?? []).map(partText);
  const hasText = (r.content ?? []).some((p) => p.type === 'text');
  // Structured content is repeated as text by servers that follow the spec; say it only when nothing else does.
  if (r.structuredContent !== undefined && !hasText) parts.push(JSON.stringify(r.structuredContent, null, 2));
  const text = parts.join('\n');
  return text === '' ? (r.isError ? 'The tool reported an error without a message.' : '(no content)') : text;
}

function partText(p: Part): string {
  switch (p.type) {
    case 'text':
      return p.text;
    case 'image':
    case 'audio':
      return `[${p.type} ${p.mimeType}, ${size(p.data)}: shown to the user in the tool card]`;
    case 'resource': {
      const r = p.resource;
      if ('text' in r && typeof r.text === 'string')
        return `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}]\n${r.text}`;
      return `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}, ${size(String((r as { blob?: unknown }).blob ?? ''))}]`;
    }
    case 'resource_link':
      return `[resource link ${p.name}: ${p.uri}${p.description ? ` — ${p.description}` : ''}]`;
    default:
      return `[${(p as { type: string }).type} content]`;
  }
}

/** Bytes of a base64 payload, as the user reads it. */
function size(base64: string): string {
  const bytes = Math.floor((base64.replace(/=+$/, '').length * 3) / 4);
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}

/**
 * The ToolOutput of a result: the model's text capped (the rest in a blob) and the exact result in
 * a blob of its own. Without a store (plain tests) the exact result is not kept.
 */
export async function resultOutput(
  r: CallToolResult,
  ctx: Pick<ToolContext, 'outputCap' | 'putBlob'>,
): Promise<ToolOutput> {
  const capped = await capOutput(resultText(r), ctx);
  const rawBlob = ctx.putBlob ? await ctx.putBlob(JSON.stringify(r)) : null;
  return { output: capped.text, is_error: r.isError === true, blob: capped.blob, raw_blob: rawBlob };
}

/**
 * The ToolOutput of a large result kept as bytes (intake.ts): the model reads the head of its text,
 * cut at a character boundary, and both the whole text and the exact result go to blobs as bytes —
 * never decoded whole on the host's main thread.
 */
export async function largeResultOutput(
  r: LargeResult,
  ctx: Pick<ToolContext, 'outputCap' | 'putBlob' | 'putBlobBytes'>,
): Promise<ToolOutput> {
  const cap = Math.max(0, Math.floor(ctx.outputCap));
  const put = ctx.putBlobBytes ?? (ctx.putBlob && ((b: Uint8Array) => ctx.putBlob!(Buffer.from(b).toString('utf8'))));
  const rawBlob = put ? await put(r.raw, r.rawHash) : null;
  if (r.text.length <= cap)
    return { output: r.text.toString('utf8'), is_error: r.isError, blob: null, raw_blob: rawBlob };
  let end = cap;
  while (end > 0 && ((r.text[end] ?? 0) & 0xc0) === 0x80) end--; // not inside a character
  const head = r.text.subarray(0, end).toString('utf8');
  let blob: string | null = null;
  let blobError: string | undefined;
  try {
    blob = put ? await put(r.text, r.textHash) : null;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    blobError = typeof code === 'string' ? `storage error ${code}` : 'storage error';
  }
  const note = truncationNote(end, r.text.length, blob, blobError);
  return { output: `${head}\n${note}`, is_error: r.isError, blob, raw_blob: rawBlob };
}
