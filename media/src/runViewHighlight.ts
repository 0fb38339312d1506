// The run view's code highlighter, a script of its own: the view loads it when it first draws a
// code block (runView.ts), and it hands itself over through the hook the view set.
import { createHighlighter, type Highlighter } from './runView/highlighter';

(globalThis as unknown as { __awHighlighterReady?: (h: Highlighter) => void }).__awHighlighterReady?.(
  createHighlighter(),
);
