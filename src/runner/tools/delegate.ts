// delegate: hands a self-contained task to a subagent. Only the definition lives here; the loop
// runs the child run (with its own checkpoints) and supplies it as ctx.delegate.
import { z } from 'zod';
import { capOutput } from './output';
import { defineTool, ToolFailure } from './types';

export const delegate = defineTool({
  name: 'delegate',
  category: 'subagent',
  // The child journals its own effects; the call itself must not be re-run blindly on resume.
  sideEffecting: true,
  description:
    'Give a self-contained subtask to a helper agent with the same tools. It starts with no memory of this ' +
    'conversation, so state everything it needs. Returns its final answer.',
  args: z.object({
    task: z.string().min(1).describe('The complete task for the helper agent'),
  }),
  async run(args, ctx) {
    if (!ctx.delegate) throw new ToolFailure('Delegation is not available in this run.');
    const r = await ctx.delegate(args.task, ctx.signal);
    const who = r.child_run_id ? ` (subagent run ${r.child_run_id})` : '';
    const capped = await capOutput(
      r.is_error ? `The subagent failed${who}: ${r.final_text}` : r.final_text,
      ctx,
      'head',
    );
    return { output: capped.text, is_error: r.is_error === true, blob: capped.blob };
  },
});
