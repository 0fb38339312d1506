// The run view's screen: header, banners, the transcript as a virtualized list, and the composer.
// It draws what the view state holds, as the reducer's effects say (viewState.ts); it keeps no
// state of its own beyond the DOM (which rows are shown, what is typed, which cards are open).
import type { TranscriptItem } from '../../../src/views/run/items';
import { type ComposerActions, Composer } from './composer';
import { el, reasonOf, renderNote } from './dom';
import { failedItem } from './failed';
import { type HeaderActions, renderHeader } from './header';
import { assistant, renderItem } from './items';
import type { Actions } from './toolCard';
import { type Effects, LIVE_KEY, type Live, type ViewState } from './viewState';
import { VirtualList } from './virtualList';

export type ScreenActions = Omit<Actions, 'expanded'> &
  Pick<HeaderActions, 'approveAll'> &
  Pick<ComposerActions, 'send'>;

export interface ScreenDeps {
  /** The page's #app element. */
  root: HTMLElement;
  actions: ScreenActions;
  /** The current state's item of a row, if read. */
  item(key: string): TranscriptItem | undefined;
  live(): Live | null;
  /** The list shows items [from, to) now. */
  visible(from: number, to: number): void;
}

export class RunViewScreen {
  readonly list: VirtualList;
  readonly scroller: HTMLElement;
  private readonly header = el('header', { class: 'run-header' });
  private readonly banner = el('div', { class: 'banners' });
  private readonly composer: Composer;

  constructor(private readonly deps: ScreenDeps) {
    this.scroller = el('main', { class: 'transcript', 'aria-live': 'polite' });
    const footer = el('footer', { class: 'composer' });
    deps.root.replaceChildren(this.header, this.banner, this.scroller, footer);
    const showError = (err: Error) => this.showError(err);
    this.composer = new Composer(footer, { send: deps.actions.send, sent: () => this.list.scrollToEnd(), showError });
    const itemActions: Actions = { ...deps.actions, expanded: new Map() };
    this.list = new VirtualList({
      scroller: this.scroller,
      render: (_index, key) => {
        if (key === LIVE_KEY) {
          const live = deps.live();
          return live ? drawnLive(live) : el('div');
        }
        const item = deps.item(key);
        return item ? drawn(item, itemActions) : el('div', { class: 'placeholder' });
      },
      visible: (from, to) => deps.visible(from, to),
    });
  }

  apply(s: ViewState, fx: Effects): void {
    if (fx.header && s.host) {
      try {
        renderHeader(this.header, this.banner, s.host, {
          run: this.deps.actions.run,
          approveAll: this.deps.actions.approveAll,
          showError: (err) => this.showError(err),
        });
        this.composer.render(s.host);
      } catch (err) {
        this.header.replaceChildren(renderNote(`The run's header could not be rendered: ${reasonOf(err)}`));
      }
    }
    for (const key of fx.redraw) this.list.invalidate(key);
    if (fx.outline) this.list.setOutline(fx.outline);
    if (fx.restore !== undefined) this.list.restore(fx.restore);
    if (fx.reveal) this.list.scrollToKey(fx.reveal);
    if (fx.refresh) this.list.refresh();
  }

  /** Rows showing an item (not a placeholder), for the first-paint measurement. */
  shownItems(): number {
    return this.scroller.querySelectorAll('.items > [data-key]:not(.placeholder)').length;
  }

  showError(err: Error): void {
    const p = el('p', { class: 'error', role: 'alert' }, err.message);
    this.banner.append(p);
    setTimeout(() => p.remove(), 8000);
  }
}

/** One item, drawn on its own: one that fails is drawn as plain text with why, and the rest of the list as usual. */
function drawn(item: TranscriptItem, a: Actions): HTMLElement {
  try {
    return renderItem(item, a);
  } catch (err) {
    return failedItem(item, err, a);
  }
}

function drawnLive(live: Live): HTMLElement {
  try {
    return assistant(live.text, live.reasoning || null, { final: false, streaming: true });
  } catch (err) {
    const root = el('div', { class: 'msg assistant streaming render-failed' });
    root.append(
      renderNote(`The answer could not be rendered: ${reasonOf(err)}`),
      el('pre', { class: 'raw' }, live.text),
    );
    return root;
  }
}
