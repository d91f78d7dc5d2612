import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium headless shell when it is installed (.ci/run installs it), else Debian's
 * chromium. The shell is the same engine at the same version without the desktop browser around
 * it, as Playwright's own headless runs use: a browser context and its first page cost it about a
 * quarter of the CPU (docs/testing.md, "Chromium's headless shell"). CHROMIUM_PATH overrides both.
 */
const CHROMIUM_BINARIES = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];

export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH ?? CHROMIUM_BINARIES.find((p) => fs.existsSync(p)) ?? CHROMIUM_BINARIES[1];
}

/** Headless, sandbox off (the tests run as root), and nothing phoning home. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
