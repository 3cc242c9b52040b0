/**
 * The system's Chromium for the browser tests, driven by playwright-core. A test file skips
 * its browser half with `CHROMIUM_SKIP_REASON` in its title where no Chromium is installed
 * (`apt-get install chromium`; .ci/run installs it when run as root).
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** `CHROMIUM_PATH`, else Debian's or Ubuntu's binary: the first that exists. */
export const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (path): path is string => path !== undefined && path !== '' && existsSync(path),
);

export const CHROMIUM_SKIP_REASON =
  CHROMIUM === undefined ? 'chromium is not installed: apt-get install chromium' : undefined;

/** A headless Chromium that runs as root in a container: no sandbox, no GPU, no calls home. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-first-run',
    ],
  });
