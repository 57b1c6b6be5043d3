import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (CI installs it; never a downloaded browser), driven by playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

/** What a browser test lacks here, for its skip message; undefined when Chromium is installed. */
export const chromiumMissing = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} (apt-get install -y chromium)`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
