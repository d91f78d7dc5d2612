import { expect } from 'vitest';
import type { Page } from 'playwright-core';

/**
 * Opens examples/web's page and waits until it says the user is on the free plan, with no error
 * shown and no script error thrown: where both the in-process checkout test and the newcomer's
 * demo on `npm start` begin their purchase.
 */
export async function openExampleOnFreePlan(page: Page, url: string): Promise<void> {
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(url);
  await expect
    .poll(
      async () => ({
        status: await page.textContent('#status'),
        error: await page.textContent('#error'),
        pageErrors,
      }),
      { timeout: 15_000 },
    )
    .toEqual({ status: 'free', error: '', pageErrors: [] });
}
