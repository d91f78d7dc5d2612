import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { expectAccessible, screenshot, signUp, uniqueEmail, dashboardHarness } from './helpers/browser';

/** Every dashboard page, at desktop and phone width, keyboard focus visible: axe-core finds no serious or critical violation. */
describe('dashboard: accessibility of every page (axe-core)', () => {
  const h = dashboardHarness();

  it('the check itself fails on a page with an unlabelled field and unreadable contrast', async () => {
    const p = await h.browser.newPage();
    await p.setContent(
      '<!doctype html><html lang="en"><title>bad</title><main><input type="text"><p style="color:#eee;background:#fff">faint</p></main></html>',
    );
    await expect(expectAccessible(p, 'known-bad page')).rejects.toThrow(/label|color-contrast/);
    await p.close();
  });

  for (const viewport of [
    { name: 'desktop', width: 1280, height: 900 },
    { name: 'phone', width: 375, height: 740 },
  ]) {
    it(`has no serious or critical violations (${viewport.name} width)`, async () => {
      const ctx = await h.browser.newContext({ viewport });
      const p = await ctx.newPage();
      const check = async (path: string, name: string) => {
        if (path) await p.goto(h.api.dashboardRoot + path);
        await expectAccessible(p, `${name} (${viewport.name})`);
        await screenshot(p, `${name}-${viewport.name}`);
      };
      await check('/', 'home');
      await check('/signup', 'signup');
      await check('/login', 'login');
      await signUp(p, h.api.dashboardRoot, uniqueEmail(`a11y-${viewport.name}`));
      await check('/settings/developer-api', 'developer-api');
      // The page with a freshly created key shown once.
      await p.getByLabel('Name').fill('a11y');
      await p.getByLabel('readiness:read', { exact: true }).check();
      await p.getByRole('button', { name: 'Create key' }).click();
      await check('', 'developer-api-created');
      await check('/providers', 'providers');
      await p.getByLabel('Account ID').fill(`acct_a11y_${viewport.name}`);
      await p.getByLabel('Provider').selectOption('store_ios');
      await p.getByRole('button', { name: 'Add connection' }).click();
      await p.waitForURL(/\/providers\/[0-9a-f-]{36}$/);
      await check('', 'provider-connection');
      for (const path of [
        '/overview',
        '/overview?mode=test&days=90',
        '/products',
        '/products/new',
        '/paywall',
        '/readiness',
        '/sync-runs',
        '/customers',
        '/subscribers',
        '/entitlements',
        '/webhook-deliveries',
        '/audit',
        '/settings/team',
      ]) {
        await check(path, path.slice(1));
      }
      await keyboardReachesCreateKey(p, h.api.dashboardRoot);
      await ctx.close();
    }, 240_000); // fifteen pages, each scanned by axe, on a shared 2-core machine
  }
});

/** Tab from the top of the page reaches the "Create key" button, and the focused element shows an outline. */
async function keyboardReachesCreateKey(p: Page, root: string) {
  await p.goto(`${root}/settings/developer-api`);
  const passed: string[] = [];
  // Past the navigation, the SDK snippets and one checkbox per scope (the list grows with the scopes).
  const STOPS = 120;
  for (let i = 0; i < STOPS; i++) {
    await p.keyboard.press('Tab');
    const focused = await p.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      return { text: el.textContent?.trim(), outline: getComputedStyle(el).outlineStyle };
    });
    if (focused.text === 'Create key') {
      if (focused.outline === 'none') throw new Error('focused "Create key" has no visible outline');
      return;
    }
    passed.push(focused.text ?? '');
  }
  throw new Error(`"Create key" is not reachable with Tab; the first ${STOPS} stops: ${JSON.stringify(passed)}`);
}
