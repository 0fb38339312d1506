// A virtualized list of variable-height items: only what is visible (plus a margin) is in the DOM.
// Heights start as the host's estimates and are replaced by measurements (ResizeObserver); the
// first visible item stays put when heights above it change, and a list scrolled to its end
// follows new items (live output).
import { afterNextPaint } from './dom';

export interface VirtualListOptions {
  scroller: HTMLElement;
  /** Renders item `index` (key `key`); returns null while its data is not loaded yet. */
  render(index: number, key: string): HTMLElement | null;
  /** Called with the index range that is about to be shown. */
  visible(from: number, to: number): void;
  overscanPx?: number;
}

export class VirtualList {
  private keys: string[] = [];
  private estimates: number[] = [];
  private readonly measured = new Map<string, number>();
  private offsets = new Float64Array(1);
  private readonly nodes = new Map<string, HTMLElement>();
  /** The scroller's window: its frames, its DOM, its ResizeObserver. */
  private readonly win: Window & typeof globalThis;
  private readonly top: HTMLElement;
  private readonly items: HTMLElement;
  private readonly bottom: HTMLElement;
  private readonly observer: ResizeObserver;
  private frame = 0;
  /** The first render with items draws only what is visible (the first paint); the margin comes a frame later. */
  private painted = false;
  /** Renders draw the margin too (from the frame after the first paint on). */
  private margin = false;
  private following = true;
  private pinned: { key: string; offset: number } | null = null;

  constructor(private readonly o: VirtualListOptions) {
    const doc = o.scroller.ownerDocument;
    this.win = doc.defaultView as Window & typeof globalThis;
    [this.top, this.items, this.bottom] = [
      doc.createElement('div'),
      doc.createElement('div'),
      doc.createElement('div'),
    ];
    this.items.className = 'items';
    o.scroller.replaceChildren(this.top, this.items, this.bottom);
    this.observer = new this.win.ResizeObserver((entries) => {
      let changed = false;
      for (const e of entries) {
        if ((e.target as HTMLElement).classList.contains('placeholder')) continue; // its height is the estimate
        const key = (e.target as HTMLElement).dataset.key!;
        const h = Math.ceil((e.target as HTMLElement).offsetHeight);
        if (h > 0 && this.measured.get(key) !== h) {
          this.measured.set(key, h);
          changed = true;
        }
      }
      if (changed) this.layout();
    });
    o.scroller.addEventListener(
      'scroll',
      () => {
        this.following = this.atBottom();
        this.pinned = null;
        this.schedule();
      },
      { passive: true },
    );
  }

  get count(): number {
    return this.keys.length;
  }

  /** New outline: keys and estimated heights. Items whose key stays keep their node and measurement. */
  setOutline(entries: readonly (readonly [string, number])[]): void {
    const anchor = this.anchor();
    this.keys = entries.map((e) => e[0]);
    this.estimates = entries.map((e) => e[1]);
    const alive = new Set(this.keys);
    for (const [key, el] of this.nodes) if (!alive.has(key)) this.drop(key, el);
    this.recompute();
    this.render(anchor);
  }

  /** The item's data arrived or changed: its node is rebuilt if shown. */
  invalidate(key: string): void {
    const el = this.nodes.get(key);
    if (!el) return;
    this.observer.unobserve(el);
    el.remove();
    this.nodes.delete(key);
    this.schedule();
  }

  /** Scrolls so the item is at the top (e.g. the first pending approval) and keeps it there while heights settle. */
  scrollToKey(key: string): boolean {
    const i = this.keys.indexOf(key);
    if (i < 0) return false;
    this.following = false;
    this.pinned = { key, offset: 0 };
    this.o.scroller.scrollTop = this.offsets[i]!;
    this.schedule();
    return true;
  }

  /** Renders again at the next frame (e.g. data that was missing may have arrived). */
  refresh(): void {
    this.schedule();
  }

  scrollToEnd(): void {
    this.following = true;
    this.schedule();
  }

  /** The first visible item and how far the view is into it (kept across reloads). */
  anchor(): { key: string; offset: number } | null {
    if (this.pinned) return this.pinned;
    if (this.following || this.keys.length === 0) return null;
    const i = this.indexAt(this.o.scroller.scrollTop);
    return { key: this.keys[i]!, offset: this.o.scroller.scrollTop - this.offsets[i]! };
  }

  restore(anchor: { key: string; offset: number } | null): void {
    if (!anchor) return this.scrollToEnd();
    this.following = false;
    this.pinned = anchor;
    this.render(anchor);
  }

  private drop(key: string, el: HTMLElement): void {
    el.remove();
    this.observer.unobserve(el);
    this.nodes.delete(key);
  }

  private atBottom(): boolean {
    const s = this.o.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < 24;
  }

  private heightOf(i: number): number {
    return this.measured.get(this.keys[i]!) ?? this.estimates[i]!;
  }

  private recompute(): void {
    const n = this.keys.length;
    this.offsets = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) this.offsets[i + 1] = this.offsets[i]! + this.heightOf(i);
  }

  private indexAt(y: number): number {
    let lo = 0;
    let hi = this.keys.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.offsets[mid]! <= y) lo = mid;
      else hi = mid - 1;
    }
    return Math.max(0, lo);
  }

  private layout(): void {
    const anchor = this.anchor();
    this.recompute();
    this.render(anchor);
  }

  private schedule(): void {
    this.frame ||= this.win.requestAnimationFrame(() => {
      this.frame = 0;
      this.render(this.anchor());
    });
  }

  private render(anchor: { key: string; offset: number } | null): void {
    const s = this.o.scroller;
    const n = this.keys.length;
    const total = this.offsets[n] ?? 0;
    let scrollTop = s.scrollTop;
    if (anchor) {
      const i = this.keys.indexOf(anchor.key);
      if (i >= 0) scrollTop = this.offsets[i]! + anchor.offset;
    } else if (this.following) scrollTop = Math.max(0, total - s.clientHeight);
    const over = this.margin ? (this.o.overscanPx ?? 600) : 0;
    if (!this.painted && n > 0) {
      this.painted = true;
      // The margin once the coming frame is drawn. Any render before that - this frame's
      // measurements coming back (ResizeObserver), a refresh - draws what is visible only: with the
      // margin, it would hold up the first paint by all the margin builds.
      afterNextPaint(this.win, () => {
        this.margin = true;
        this.schedule();
      });
    }
    const first = n === 0 ? 0 : this.indexAt(Math.max(0, scrollTop - over));
    const last = n === 0 ? -1 : this.indexAt(scrollTop + s.clientHeight + over);
    if (n > 0) this.o.visible(first, last + 1);
    const wanted: HTMLElement[] = [];
    for (let i = first; i <= last; i++) {
      const key = this.keys[i]!;
      let el = this.nodes.get(key);
      if (!el) {
        const made = this.o.render(i, key);
        if (!made) continue;
        el = made;
        el.dataset.key = key;
        if (el.classList.contains('placeholder')) el.style.height = `${this.heightOf(i)}px`;
        this.nodes.set(key, el);
        this.observer.observe(el);
      }
      wanted.push(el);
    }
    const keep = new Set(wanted);
    for (const [key, el] of this.nodes) if (!keep.has(el)) this.drop(key, el);
    wanted.forEach((el, i) => {
      if (this.items.children[i] !== el) this.items.insertBefore(el, this.items.children[i] ?? null);
    });
    const firstShown = wanted.length > 0 ? this.keys.indexOf(wanted[0]!.dataset.key!) : first;
    const lastShown = wanted.length > 0 ? this.keys.indexOf(wanted[wanted.length - 1]!.dataset.key!) : first - 1;
    this.top.style.height = `${this.offsets[firstShown] ?? 0}px`;
    this.bottom.style.height = `${Math.max(0, total - (this.offsets[lastShown + 1] ?? total))}px`;
    if (Math.abs(s.scrollTop - scrollTop) > 1) s.scrollTop = scrollTop;
    if (this.following && !anchor) s.scrollTop = s.scrollHeight;
  }
}
