// Text from runs (titles, tasks, tool arguments, reasons) inside Markdown the views build for
// tooltips and documents: every character Markdown would act on is escaped, so a title reads as
// typed and cannot turn into a link, a heading or a table cell. vscode-free.
export function escapeMarkdown(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+!|<>]/g, (c) => `\\${c}`);
}
