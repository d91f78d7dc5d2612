import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_c/emulator';
import { ProviderRejectedError } from '../../providers/errors';
import { createPspCAdapter } from '../../providers/psp_c/adapter';
import type { ProductSpec } from '../../providers/types';
import { controlFor } from '../helpers/emulator-control';

// Razorpay partner OAuth as a merchant goes through it: consent page, redirect with code
// and state, token exchange for the connected account, then API calls with the token.

let emu: RunningEmulator;
let account: { account: string };
const adapter = createPspCAdapter();
const client = { client_id: 'PartnerApp0001', client_secret: 'partner-secret-xyz' };
const redirectUri = 'http://127.0.0.1:4001/providers/psp_c/oauth/callback';

const control = controlFor(() => emu.url);

/** Walks the consent page: GET /oauth/authorize, then submits its form the way a browser would. */
async function connect(fields: Record<string, string>): Promise<URL> {
  const q = new URLSearchParams({
    client_id: client.client_id,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'read_write',
    state: 'st-123',
  });
  const page = await fetch(`${emu.url}/oauth/authorize?${q}`);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('<form method="post" action="/oauth/authorize">');
  const form = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    form.set(
      m[1],
      m[2].replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c))),
    );
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  const res = await fetch(`${emu.url}/oauth/authorize`, { method: 'POST', body: form, redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location')!);
}

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  account = await control('POST', '/accounts', {});
  await control('POST', '/oauth_clients', client);
});
afterAll(() => emu.close());

describe('psp_c OAuth connect', () => {
  it('round trip: consent, code, token exchange, API calls as the connected account', async () => {
    const back = await connect({ account: account.account, mode: 'test', decision: 'allow' });
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
    expect(back.searchParams.get('state')).toBe('st-123');
    const code = back.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const result = await adapter.exchangeOAuthCode!(emu.url, client, code);
    expect(result.account_ref).toBe(account.account);
    expect(result.mode).toBe('test');
    expect(Object.keys(result.credential).sort()).toEqual(['access_token', 'public_token', 'refresh_token']);
    expect(result.credential.public_token).toMatch(/^rzp_test_oauth_/);

    const ctx = {
      baseUrl: emu.url,
      mode: 'test' as const,
      credential: result.credential,
      accountRef: result.account_ref,
    };
    await adapter.checkReachable(ctx);
    const spec: ProductSpec = {
      product_id: '33333333-3333-4333-8333-333333333333',
      tenant_id: '11111111-1111-4111-8111-111111111111',
      sku: 'oauth_sku',
      name: 'Via OAuth',
      type: 'subscription',
      tier: 'annual',
      version: 1,
      prices: [{ country: 'IN', currency: 'INR', amount_minor: 99_900 }],
    };
    const { external_id } = await adapter.upsertProduct(ctx, spec, 'k');
    const s = await control('GET', '/state');
    expect(s.items.find((i: { id: string }) => i.id === external_id)).toMatchObject({
      _account: account.account,
      _mode: 'test',
    });

    // The code is single-use.
    const reuse = await adapter.exchangeOAuthCode!(emu.url, client, code).catch((e) => e);
    expect(reuse).toBeInstanceOf(ProviderRejectedError);
  });

  it('a new account can be connected in live mode', async () => {
    const back = await connect({ account: 'new', mode: 'live', decision: 'allow' });
    const result = await adapter.exchangeOAuthCode!(emu.url, client, back.searchParams.get('code')!);
    expect(result.mode).toBe('live');
    expect(result.account_ref).toMatch(/^acc_/);
    expect(result.account_ref).not.toBe(account.account);
    await adapter.checkReachable({
      baseUrl: emu.url,
      mode: 'live',
      credential: result.credential,
      accountRef: result.account_ref,
    });
    const asTest = await adapter
      .checkReachable({ baseUrl: emu.url, mode: 'test', credential: result.credential, accountRef: result.account_ref })
      .catch((e) => e);
    expect(asTest).toBeInstanceOf(ProviderRejectedError);
  });

  it('a denied consent redirects with access_denied and no code', async () => {
    const back = await connect({ decision: 'deny' });
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('a wrong client secret is refused without echoing it', async () => {
    const back = await connect({ account: account.account, mode: 'test', decision: 'allow' });
    const err = await adapter.exchangeOAuthCode!(
      emu.url,
      { ...client, client_secret: 'wrong-secret' },
      back.searchParams.get('code')!,
    ).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(401);
    expect(err.message).not.toContain('wrong-secret');
  });

  it('a revoked or unknown bearer token gets Razorpay’s 401', async () => {
    const err = await adapter
      .checkReachable({
        baseUrl: emu.url,
        mode: 'test',
        credential: { access_token: 'nope' },
        accountRef: account.account,
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(401);
  });
});
