// read_output: the model reads back an earlier tool output that its context shows only as a stub
// (render.ts). Read-only, from the run's own history (the messages keep every output whole), in
// pages of characters, so reading a long output back never floods the window again.
import { z } from 'zod';
import { defineTool, ToolFailure } from '../tools/types';
import { READ_OUTPUT_TOOL } from './render';

const PAGE_CHARS = 8000;

export const readOutput = defineTool({
  name: READ_OUTPUT_TOOL,
  category: 'read',
  sideEffecting: false,
  description:
    'Read again the full output of an earlier tool call of this run, when the conversation shows only a stub of it (older outputs are elided to keep the context small). Returns characters offset..offset+limit.',
  args: z.object({
    tool_call_id: z.string().min(1).describe('The id named in the stub'),
    offset: z.number().int().min(0).optional().describe('First character to return (default 0)'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(PAGE_CHARS * 4)
      .optional()
      .describe(`How many characters (default ${PAGE_CHARS})`),
  }),
  async run(args, ctx) {
    const full = await ctx.history?.toolOutput(args.tool_call_id);
    if (full === undefined) throw new ToolFailure(`No tool call ${args.tool_call_id} with an output in this run.`);
    const from = Math.min(args.offset ?? 0, full.length);
    const to = Math.min(full.length, from + (args.limit ?? PAGE_CHARS));
    const more = to < full.length ? `; the next page starts at offset ${to}` : '';
    const head = `[Output of ${args.tool_call_id}: characters ${from}–${to} of ${full.length}${more}]\n`;
    return { output: head + full.slice(from, to), is_error: false, blob: null };
  },
});
