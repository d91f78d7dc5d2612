import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { sdkModuleUrl } from '../../api/dashboard/sdk-files';
import { listen, startApi } from '../helpers/api';
import { makeEntitlement, makeTenant } from '../helpers/factories';
import { launchBrowser } from './helpers/browser';

/**
 * The SDK in real Chromium (docs/entitlement-tokens.md, "The SDK"): an app's page imports it
 * from the service's own host, as the dashboard's snippet says, fetches the user's entitlement
 * token, checks it with the browser's WebCrypto (Ed25519) against the published keys, and
 * refuses a cached answer someone edited in localStorage, even one edited together with its
 * token. Where WebCrypto has no Ed25519 (older browsers; here Ed25519 is taken away before the
 * page runs), the SDK keeps answering and says the answer is unverified.
 */
describe('the SDK’s entitlement token in a browser', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let app: Awaited<ReturnType<typeof listen>>;
  let browser: Browser;
  let tenant: Awaited<ReturnType<typeof makeTenant>>;

  beforeAll(async () => {
    [api, browser, tenant] = await Promise.all([startApi(), launchBrowser(), makeTenant('sdk-token-browser')]);
    const url = sdkModuleUrl(api.dashboardRoot);
    if (!url) throw new Error('sdk/dist is missing: run `npm run sdk:build` first.');
    // The app's own origin: a page that imports the SDK from the service's host, as the dashboard's snippet shows.
    app = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>app</title><script type="module">import * as sdk from '${url}'; window.sdk = sdk;</script>`,
      );
    });
    await makeEntitlement(tenant.tenant_id, { appUserId: 'premium-user' });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await api?.close();
  });

  /** A fresh browser profile (its own localStorage) on the app's page; `init` runs before the page's scripts. */
  const page = async (init?: () => void): Promise<Page> => {
    const ctx = await browser.newContext();
    if (init) await ctx.addInitScript(init);
    const p = await ctx.newPage();
    await p.goto(app.url);
    await p.waitForFunction(() => 'sdk' in window);
    return p;
  };

  /** What the steps below get in the page: the SDK, one user's instance, and its localStorage entries. */
  interface InPage {
    sdk: any;
    billing: any;
    keys: { answer: string; token: string };
    jwksUrl: string;
    audience: string;
    /** Rewrites a localStorage entry, as someone with the device's storage can. */
    edit: (key: string, f: (v: any) => any) => void;
    b64: (o: unknown) => string;
    unb64: (s: string) => any;
  }
  /** Runs `steps` as the page's own code, for one app user (a fresh instance, this page's localStorage). */
  const inPage = (p: Page, appUserId: string, steps: (x: InPage) => Promise<unknown>): Promise<any> =>
    p.evaluate(
      async ({ backend, publishableKey, appUserId, audience, steps }) => {
        const sdk = (window as unknown as { sdk: any }).sdk;
        sdk.Billing.reset();
        const billing = sdk.Billing.configure({ publishableKey, backend, appUserId, platform: 'web' });
        const x = {
          sdk,
          billing,
          keys: {
            answer: `billing.v2:subscriber:${publishableKey}:${appUserId}`,
            token: `billing.v2:token:${publishableKey}:${appUserId}`,
          },
          jwksUrl: `${backend}/.well-known/jwks.json`,
          audience,
          edit: (key: string, f: (v: any) => any) =>
            localStorage.setItem(key, JSON.stringify(f(JSON.parse(localStorage.getItem(key)!)))),
          b64: (o: unknown) => btoa(JSON.stringify(o)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
          unb64: (s: string) => JSON.parse(atob(s.replace(/-/g, '+').replace(/_/g, '/'))),
        };
        return (0, eval)(`(${steps})`)(x);
      },
      {
        backend: api.apiRoot,
        publishableKey: tenant.publishable_key,
        appUserId,
        audience: `${tenant.tenant_id}:test`,
        steps: steps.toString(),
      },
    );

  it('fetches the token, verifies it with WebCrypto Ed25519 against the JWKS, and answers premium, verified', async () => {
    const p = await page();
    const r = await inPage(p, 'premium-user', async ({ sdk, billing, keys, jwksUrl, audience }) => {
      const before = await billing.getEntitlements();
      const token = await billing.entitlementToken();
      const claims = await sdk.verifyEntitlementToken(token, { jwksUrl, audience });
      const after = await billing.getEntitlements();
      const kept = JSON.parse(localStorage.getItem(keys.token)!).value;
      return { ed25519: await sdk.ed25519Available(), before, claims, after, keptIsToken: kept === token };
    });
    expect(r.ed25519).toBe(true);
    expect(r.before).toMatchObject({ isPremium: true, verified: false }); // no token kept yet
    expect(r.claims).toMatchObject({ sub: 'premium-user', premium: true, tenant_id: tenant.tenant_id, mode: 'test' });
    expect(r.after).toMatchObject({ isPremium: true, verified: true, stale: false, fetchedAt: r.before.fetchedAt });
    expect(r.keptIsToken).toBe(true);
    await p.context().close();
  });

  it('refuses a cached answer edited to say premium, alone or with its token edited to match, and asks the service again', async () => {
    const p = await page();
    const r = await inPage(p, 'free-user', async ({ billing, keys, edit, b64, unb64 }) => {
      // A cached answer and the token beside it: the answer is served, verified.
      await billing.getEntitlements();
      await billing.entitlementToken();
      const honest = await billing.getEntitlements();
      // An edited answer alone disagrees with the kept token.
      edit(keys.answer, (e) => ({ ...e, value: { ...e.value, isPremium: true } }));
      const answerOnly = await billing.getEntitlements();
      await billing.entitlementToken();
      const honestAgain = await billing.getEntitlements();
      // Both edited to agree: the token's signature no longer holds.
      edit(keys.answer, (e) => ({ ...e, value: { ...e.value, isPremium: true } }));
      edit(keys.token, (e) => {
        const [h, payload, s] = e.value.split('.');
        return { ...e, value: [h, b64({ ...unb64(payload), premium: true }), s].join('.') };
      });
      const both = await billing.getEntitlements();
      return {
        honest,
        answerOnly,
        honestAgain,
        both,
        cached: JSON.parse(localStorage.getItem(keys.answer)!).value.isPremium,
      };
    });
    expect(r.honest).toMatchObject({ isPremium: false, verified: true });
    expect(r.answerOnly).toMatchObject({ isPremium: false, stale: false });
    expect(r.honestAgain).toMatchObject({ isPremium: false, verified: true });
    expect(r.both).toMatchObject({ isPremium: false, stale: false });
    expect(r.cached).toBe(false);
    await p.context().close();
  });

  it('where WebCrypto has no Ed25519 the SDK keeps working and marks its cached answers unverified', async () => {
    // As a browser without Ed25519 in WebCrypto answers: the algorithm is not supported.
    const p = await page(() => {
      const subtle = crypto.subtle;
      const refuse = (alg: unknown) =>
        (typeof alg === 'string' ? alg : (alg as { name?: string })?.name)?.toLowerCase() === 'ed25519';
      const importKey = subtle.importKey.bind(subtle);
      const verify = subtle.verify.bind(subtle);
      Object.assign(subtle, {
        importKey: (...args: Parameters<SubtleCrypto['importKey']>) =>
          refuse(args[2])
            ? Promise.reject(new DOMException('Algorithm: Unrecognized name', 'NotSupportedError'))
            : importKey(...args),
        verify: (...args: Parameters<SubtleCrypto['verify']>) =>
          refuse(args[0])
            ? Promise.reject(new DOMException('Algorithm: Unrecognized name', 'NotSupportedError'))
            : verify(...args),
      });
    });
    const r = await inPage(p, 'premium-user', async ({ sdk, billing, jwksUrl, audience }) => {
      // As in the first test: an answer, its token beside it, then the answer from the cache.
      const first = await billing.getEntitlements();
      const token = await billing.entitlementToken();
      const answer = await billing.getEntitlements();
      const direct = await sdk.verifyEntitlementToken(token, { jwksUrl, audience }).then(
        () => 'verified',
        (e: { reason: string }) => e.reason,
      );
      return { ed25519: await sdk.ed25519Available(), first, answer, direct };
    });
    expect(r.ed25519).toBe(false);
    expect(r.answer).toMatchObject({ isPremium: true, verified: false, stale: false, fetchedAt: r.first.fetchedAt });
    expect(r.direct).toBe('unsupported');
    await p.context().close();
  });
});
