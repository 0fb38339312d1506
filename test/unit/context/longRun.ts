// A long scripted run for the context tests: every step one side-effecting command that appends
// its step to effects.log (each must happen exactly once) and prints a few KB of a file, so the
// tool outputs add up to many times a small model's window.
import fs from 'node:fs';
import path from 'node:path';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';

export const OUTPUT_FILES = 7;

export function longScenario(steps: number): Scenario {
  const turns: Scenario['turns'] = [];
  for (let i = 0; i < steps; i++) {
    turns.push({
      reply: {
        content: `Step ${i}: appending and reading out${i % OUTPUT_FILES}.txt.`,
        tool_calls: [
          {
            name: 'run_command',
            arguments: { command: `echo step-${i} >> effects.log && cat out${i % OUTPUT_FILES}.txt` },
          },
        ],
      },
    });
  }
  turns.push({ reply: { content: `Done after ${steps} steps.` } });
  return {
    name: 'long-run',
    description: 'offline demo model: a long run',
    model: DEMO_MODEL_ID,
    turns,
    subconversations: [],
  };
}

/** A workspace with the files the steps print (≈ `bytes` each, varied text so it tokenizes like real output). */
export function prepareWorkspace(dir: string, bytes = 5000): void {
  for (let f = 0; f < OUTPUT_FILES; f++) {
    const lines: string[] = [];
    let size = 0;
    for (let l = 0; size < bytes; l++) {
      const line = `src/module${f}/file${l}.ts:${l * 7 + f}: expected ${l % 13} to equal ${(l * 31) % 97} in test case ${f}-${l} (${['ok', 'fail', 'skip'][l % 3]})`;
      lines.push(line);
      size += line.length + 1;
    }
    fs.writeFileSync(path.join(dir, `out${f}.txt`), lines.join('\n') + '\n');
  }
}

export function effectLines(dir: string): string[] {
  const f = path.join(dir, 'effects.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
}

export const expectedEffects = (steps: number): string[] => Array.from({ length: steps }, (_, i) => `step-${i}`);
