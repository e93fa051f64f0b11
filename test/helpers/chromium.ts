import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/**
 * Headless Debian Chromium (/usr/bin/chromium) for browser tests, with a fresh profile directory and
 * the flags that keep it off the network (this machine's network is closed; without them Chromium
 * retries Google's hosts at every start). playwright-core refuses --user-data-dir among launch()
 * args, so the profile is given to launchPersistentContext instead.
 */
export interface HeadlessBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export const CHROMIUM_PATH = '/usr/bin/chromium';

export async function launchChromium(): Promise<HeadlessBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'facectl-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
