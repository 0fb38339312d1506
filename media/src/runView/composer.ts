// The box at the bottom: a message to the thread's latest run (queued while it works, else a
// follow-up turn). What is typed survives the host's state updates, which redraw the composer.
import type { StateMessage } from '../../../src/views/run/protocol';
import { button, el, icon } from './dom';

export interface ComposerActions {
  send(runId: string, text: string): Promise<unknown>;
  sent(): void;
  showError(err: Error): void;
}

export class Composer {
  private draft = '';

  constructor(
    private readonly root: HTMLElement,
    private readonly a: ComposerActions,
  ) {}

  render(s: StateMessage): void {
    const run = s.runs[s.runs.length - 1]!;
    const box = el('vscode-textarea', {
      rows: '2',
      placeholder: 'Message the agent… (Ctrl+Enter to send)',
      'aria-label': 'Message',
    }) as HTMLElement & { value: string };
    box.value = this.draft;
    box.addEventListener('input', () => (this.draft = box.value));
    const send = () => {
      const text = box.value.trim();
      if (!text) return;
      sendButton.setAttribute('disabled', '');
      this.a.send(run.runId, text).then(
        () => {
          this.draft = box.value = '';
          sendButton.removeAttribute('disabled');
          this.a.sent();
        },
        (e: Error) => (sendButton.removeAttribute('disabled'), this.a.showError(e)),
      );
    };
    box.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send();
    });
    const sendButton = button('Send', 'send', send);
    if (s.readOnly) {
      box.setAttribute('disabled', '');
      sendButton.setAttribute('disabled', '');
    }
    const hint = el('p', { class: 'hint' });
    hint.append(icon('info'), document.createTextNode(` ${s.readOnly ? 'Read-only here.' : s.composerHint}`));
    const row = el('div', { class: 'row' });
    row.append(box, sendButton);
    this.root.replaceChildren(row, hint);
  }
}
