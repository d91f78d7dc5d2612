import http from 'node:http';
import type net from 'node:net';
import { describe, expect, it } from 'vitest';
import { dashboardHarness, signUp, uniqueEmail } from './helpers/browser';

describe('dashboard: anti-framing and sniffing headers (issue #18, item 3)', () => {
  const h = dashboardHarness();

  const expectHeaders = (headers: Headers | Record<string, string>, where: string) => {
    const get = (n: string) => (headers instanceof Headers ? headers.get(n) : headers[n]) ?? '';
    expect(get('content-security-policy'), where).toContain("frame-ancestors 'none'");
    expect(get('content-security-policy'), where).toContain("script-src 'self'");
    expect(get('x-frame-options'), where).toBe('DENY');
    expect(get('x-content-type-options'), where).toBe('nosniff');
    expect(get('referrer-policy'), where).toBe('strict-origin-when-cross-origin');
  };

  it('/login, the front page and the key pages carry them, and the Copy button still works under the CSP', async () => {
    for (const path of ['/', '/login', '/signup'])
      expectHeaders((await fetch(h.api.dashboardRoot + path)).headers, path);
    const ctx = await h.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    const p = await ctx.newPage();
    const violations: string[] = [];
    p.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await signUp(p, h.api.dashboardRoot, uniqueEmail('csp'));
    const page = await p.goto(`${h.api.dashboardRoot}/settings/developer-api`);
    expectHeaders(await page!.allHeaders(), '/settings/developer-api');
    await p.getByLabel('Name').fill('csp');
    await p.getByLabel('tenant:read', { exact: true }).check();
    const [post] = await Promise.all([
      p.waitForResponse((r) => r.request().method() === 'POST'),
      p.getByRole('button', { name: 'Create key' }).click(),
    ]);
    expectHeaders(await post.allHeaders(), 'POST /settings/developer-api/keys');
    const secret = await p.getByLabel('Secret key', { exact: true }).inputValue();
    // The stylesheet applied (served from 'self') and the script ran (no inline handler).
    await expect(p.locator('header').evaluate((e) => getComputedStyle(e).backgroundColor)).resolves.toBe(
      'rgb(21, 54, 94)',
    );
    await p.getByRole('button', { name: 'Copy', exact: true }).click();
    await p.getByRole('button', { name: 'Copied' }).waitFor();
    await expect(p.evaluate(() => navigator.clipboard.readText())).resolves.toBe(secret);
    expect(violations).toEqual([]);
    await ctx.close();
  });

  it('Chromium refuses to show /login in a frame on another origin', async () => {
    // Another origin: a page on a different port framing the dashboard's login.
    const evil = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><title>evil</title><iframe id="f" src="${h.api.dashboardRoot}/login"></iframe>`);
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    try {
      const ctx = await h.browser.newContext();
      const p = await ctx.newPage();
      const [framed] = await Promise.all([
        p.waitForResponse((r) => r.url() === `${h.api.dashboardRoot}/login`),
        p.goto(`http://localhost:${(evil.address() as net.AddressInfo).port}/`),
      ]);
      expect(framed.status()).toBe(200); // the response arrived, and the browser would not render it
      const frame = p.frames().find((f) => f !== p.mainFrame())!;
      // A blocked frame is left on an error document with none of the login form in it.
      await expect(frame.locator('input[name=password]').count()).resolves.toBe(0);
      await ctx.close();
    } finally {
      await new Promise((r) => evil.close(r));
    }
  });
});
