// Which images the run view draws (raster formats only, as data its CSP allows, of a bounded size):
// checked where a tool's result becomes a card part (richResult.ts) and again in the webview before
// an <img> gets its data. No imports: the webview bundles this file.
export const MAX_IMAGE_BASE64 = 8_000_000;
export const SAFE_IMAGE = /^image\/(png|jpeg|gif|webp|bmp)$/i;

export function isSafeImage(mimeType: string, base64: string): boolean {
  return SAFE_IMAGE.test(mimeType) && base64.length <= MAX_IMAGE_BASE64;
}
