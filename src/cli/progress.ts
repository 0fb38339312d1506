// Progress of a run on stderr, one line per step and per tool call, from the runner's events (the
// same events a window's views follow): what a person watching a long run wants to see.
import type { AgentRunner } from '../runner/runner';
import type { Disposable } from '../common/disposable';
import { callLine } from './output';

export function reportProgress(runner: AgentRunner, write: (line: string) => void): Disposable {
  const tag = (runId: string) => runId.slice(0, 8);
  return runner.events.on((e) => {
    switch (e.type) {
      case 'llm':
        if (e.status === 'start') write(`${tag(e.runId)} step ${e.step}: asking the model`);
        break;
      case 'tool':
        if (e.status === 'end') write(`${tag(e.runId)} step ${e.step}: ${e.toolName} ${e.isError ? 'failed' : 'done'}`);
        else write(`${tag(e.runId)} step ${e.step}: ${e.toolName} …`);
        break;
      case 'approval-requested':
        write(
          `${tag(e.runId)} step ${e.approval.step}: waiting for approval: ${e.approval.tool_call_id} ${callLine(e.approval.tool_name, e.approval.arguments)}`,
        );
        break;
      case 'effect-replayed':
        write(`${tag(e.runId)} ${e.toolName} had already run: its recorded result is used`);
        break;
      case 'leftovers':
        if (e.status === 'waiting' && e.detail) write(`${tag(e.runId)} ${e.detail}`);
        break;
      case 'state':
        if (e.state !== 'running' && e.detail) write(`${tag(e.runId)} ${e.state}: ${e.detail}`);
        break;
      case 'log':
        if (e.level !== 'info') write(`${e.runId ? `${tag(e.runId)} ` : ''}${e.level}: ${e.message}`);
        break;
    }
  });
}
