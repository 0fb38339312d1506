// The run view's virtual list in a DOM (jsdom: no layout, so the scroller's height is set by hand):
// its first render with items draws what is visible only, and the margin above and below comes
// once that frame is drawn - not among the callbacks that run before it is.
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { VirtualList } from '../../../../media/src/runView/virtualList';

describe('run view: the virtual list', () => {
  it('draws the visible rows first, and the margin only after the frame that shows them', async () => {
    const dom = new JSDOM('<!doctype html><html><body><main></main></body></html>', { pretendToBeVisual: true });
    const win = dom.window as unknown as Window & typeof globalThis;
    (win as unknown as { ResizeObserver: unknown }).ResizeObserver = class {
      observe(): void {}
      unobserve(): void {}
      disconnect(): void {}
    };
    const scroller = win.document.querySelector('main')!;
    Object.defineProperty(scroller, 'clientHeight', { value: 300 });
    const list = new VirtualList({
      scroller,
      render: (_i, key) => {
        const row = win.document.createElement('div');
        row.textContent = key;
        return row;
      },
      visible: () => undefined,
      overscanPx: 600,
    });
    const rows = () => scroller.querySelectorAll('.items > [data-key]').length;
    const frame = () => new Promise((resolve) => win.requestAnimationFrame(resolve));
    try {
      list.setOutline(Array.from({ length: 100 }, (_, i) => [`k${i}`, 30] as const));
      const visible = rows();
      assert.ok(visible >= 10 && visible <= 12, `the rows that fit 300 px of 30 px rows: ${visible}`);
      list.refresh(); // a render among the coming frame's callbacks, as the rows' measurements make one
      await frame();
      assert.equal(rows(), visible, 'the frame that shows the first rows draws no margin');
      for (let i = 0; i < 20 && rows() === visible; i++) await frame();
      assert.ok(rows() >= visible + 20, `the margin follows: ${rows()} rows`);
    } finally {
      dom.window.close();
    }
  });
});
