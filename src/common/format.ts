// Number and time formatting shared by the tools' notes and the run view (the webview bundles it too, so it
// stays dependency-free). Not toLocaleString: the same text in every locale, and in the webview its
// first call would load the locale's number data on the first paint's path.

/** 12345 → "12,345" (the same in every locale). */
export function count(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A moment in local time, to the minute: "2026-11-24 18:05" (the same in every locale, no locale data loaded). */
export function localMinute(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}
