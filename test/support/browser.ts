import { type Browser, chromium } from 'playwright-core';
import { chromiumPath } from './codeServer';

/** Headless Debian Chromium with the flags this offline machine needs (vscode-in-ci.md). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
  });
}
