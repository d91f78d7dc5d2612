import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_a/emulator';
import { ProviderRejectedError } from '../../providers/errors';
import { createPspAAdapter } from '../../providers/psp_a/adapter';
import type { ProductSpec } from '../../providers/types';
import { getOrPostControlFor } from '../helpers/emulator-control';

let emu: RunningEmulator;
let platform: {
  account: string;
  client_id: string;
  credentials: { test: { secret_key: string }; live: { secret_key: string } };
};
const adapter = createPspAAdapter();
const REDIRECT = 'https://dashboard.example.test/connect/psp_a/callback';

const control = getOrPostControlFor(() => emu.url);

/** What a person's browser does: open the authorize page, read its form, press a button, get redirected. */
async function connectInBrowser(opts: {
  state: string;
  decision?: string;
  email?: string;
  clientId?: string;
}): Promise<URL> {
  const authorize = new URL('/oauth/authorize', emu.url);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: opts.clientId ?? platform.client_id,
    scope: 'read_write',
    redirect_uri: REDIRECT,
    state: opts.state,
  })) {
    authorize.searchParams.set(k, v);
  }
  const page = await fetch(authorize);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/text\/html/);
  const html = await page.text();
  const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(html);
  expect(form, 'the page has a form').toBeTruthy();
  expect(html).toContain('>Connect</button>');
  const fields = new URLSearchParams();
  for (const m of form![2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields.set(m[1], m[2].replace(/&amp;/g, '&').replace(/&quot;/g, '"'));
  if (opts.email) fields.set('email', opts.email);
  fields.set('decision', opts.decision ?? 'connect');
  const submitted = await fetch(new URL(form![1], emu.url), { method: 'POST', body: fields, redirect: 'manual' });
  expect(submitted.status).toBe(302);
  return new URL(submitted.headers.get('location')!);
}

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  platform = await control('/accounts', { account: 'acct_platform' });
});
afterAll(async () => {
  await emu?.close();
});

describe('psp_a Connect OAuth', () => {
  it('round trip: authorize page → code → token exchange → the new account works with the returned key', async () => {
    const state = crypto.randomBytes(8).toString('hex');
    const back = await connectInBrowser({ state, email: 'owner@example.com' });
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe(state);
    expect(back.searchParams.get('scope')).toBe('read_write');
    const code = back.searchParams.get('code')!;
    expect(code).toMatch(/^ac_/);

    const connected = await adapter.exchangeOAuthCode!(
      emu.url,
      { client_id: platform.client_id, client_secret: platform.credentials.test.secret_key },
      code,
    );
    expect(connected.account_ref).toMatch(/^acct_/);
    expect(connected.account_ref).not.toBe(platform.account);
    expect(connected.mode).toBe('test');
    expect(connected.credential.secret_key).toMatch(/^sk_test_/);

    const ctx = {
      baseUrl: emu.url,
      mode: 'test' as const,
      credential: connected.credential,
      accountRef: connected.account_ref,
    };
    await adapter.checkReachable(ctx);
    const spec: ProductSpec = {
      product_id: crypto.randomUUID(),
      tenant_id: 't',
      sku: 'connected',
      name: 'Connected',
      type: 'subscription',
      tier: 'monthly',
      version: 1,
      prices: [],
    };
    const { external_id } = await adapter.upsertProduct(ctx, spec, 'k1');
    const state2 = await control<Record<string, Record<string, unknown>[]>>('/state');
    expect(state2.products.find((p) => p.id === external_id)?._account).toBe(connected.account_ref);
    expect(state2.accounts.find((a) => a.id === connected.account_ref)).toMatchObject({
      email: 'owner@example.com',
      _platform: platform.account,
    });

    // The platform may act on the connected account with its own key and the Stripe-Account header.
    const asPlatform = { ...ctx, credential: { secret_key: platform.credentials.test.secret_key } };
    expect((await adapter.listRemoteProducts(asPlatform)).map((p) => p.external_id)).toContain(external_id);
    // …but the connected account does not see the platform's objects.
    const err = await adapter.listRemoteProducts({ ...ctx, accountRef: platform.account }).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(403);
  });

  it('a live client secret yields a live connection', async () => {
    const back = await connectInBrowser({ state: 's' });
    const connected = await adapter.exchangeOAuthCode!(
      emu.url,
      { client_id: platform.client_id, client_secret: platform.credentials.live.secret_key },
      back.searchParams.get('code')!,
    );
    expect(connected.mode).toBe('live');
    expect(connected.credential.secret_key).toMatch(/^sk_live_/);
    await adapter.checkReachable({
      baseUrl: emu.url,
      mode: 'live',
      credential: connected.credential,
      accountRef: connected.account_ref,
    });
  });

  it('a code works once, only for its platform, and only with a valid secret', async () => {
    const code = (await connectInBrowser({ state: 's' })).searchParams.get('code')!;
    const other = await control<typeof platform>('/accounts', {});
    const wrongPlatform = await adapter.exchangeOAuthCode!(
      emu.url,
      { client_id: other.client_id, client_secret: other.credentials.test.secret_key },
      code,
    ).catch((e) => e);
    expect(wrongPlatform).toBeInstanceOf(ProviderRejectedError);
    expect(wrongPlatform.reason).toMatch(/invalid_grant/);
    const badSecret = await adapter.exchangeOAuthCode!(
      emu.url,
      { client_id: platform.client_id, client_secret: 'sk_test_wrong' },
      code,
    ).catch((e) => e);
    expect(badSecret).toBeInstanceOf(ProviderRejectedError);
    expect(badSecret.status).toBe(401);
    await adapter.exchangeOAuthCode!(
      emu.url,
      { client_id: platform.client_id, client_secret: platform.credentials.test.secret_key },
      code,
    );
    const reused = await adapter.exchangeOAuthCode!(
      emu.url,
      { client_id: platform.client_id, client_secret: platform.credentials.test.secret_key },
      code,
    ).catch((e) => e);
    expect(reused).toBeInstanceOf(ProviderRejectedError);
    expect(reused.reason).toMatch(/invalid_grant.*already used/);
  });

  it("a fresh emulator accepts the dashboard's configured client id and secret (pinned at first use)", async () => {
    const clientId = `ca_${crypto.randomBytes(8).toString('hex')}`;
    const secret = `sk_test_${crypto.randomBytes(16).toString('hex')}`;
    const code = (await connectInBrowser({ state: 's', clientId })).searchParams.get('code')!;
    const connected = await adapter.exchangeOAuthCode!(emu.url, { client_id: clientId, client_secret: secret }, code);
    expect(connected.account_ref).toMatch(/^acct_/);
    const code2 = (await connectInBrowser({ state: 's', clientId })).searchParams.get('code')!;
    const other = await adapter.exchangeOAuthCode!(
      emu.url,
      { client_id: clientId, client_secret: `sk_test_${crypto.randomBytes(16).toString('hex')}` },
      code2,
    ).catch((e) => e);
    expect(other).toBeInstanceOf(ProviderRejectedError);
    expect(other.status).toBe(401);
    await adapter.exchangeOAuthCode!(emu.url, { client_id: clientId, client_secret: secret }, code2);

    // Or registered up front through the control API.
    const registered = await control<{ client_id: string; client_secret: string; account: string }>('/oauth_clients', {
      client_id: 'ca_registeredUpFront1',
      client_secret: 'sk_test_registeredUpFront0001',
    });
    expect(registered).toMatchObject({
      client_id: 'ca_registeredUpFront1',
      client_secret: 'sk_test_registeredUpFront0001',
    });
    const code3 = (await connectInBrowser({ state: 's', clientId: registered.client_id })).searchParams.get('code')!;
    await expect(
      adapter.exchangeOAuthCode!(
        emu.url,
        { client_id: registered.client_id, client_secret: registered.client_secret },
        code3,
      ),
    ).resolves.toMatchObject({ mode: 'test' });
    // Platforms are not merchants: events still default to the first merchant account.
    const state = await control<Record<string, Record<string, unknown>[]>>('/state');
    expect(state.accounts.find((a) => a._client_id === registered.client_id)?._oauth_client).toBe(true);
  });

  it('denying returns access_denied with the state; a malformed client id gets an error page', async () => {
    const back = await connectInBrowser({ state: 'st8', decision: 'deny' });
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st8');
    expect(back.searchParams.get('code')).toBeNull();
    const bad = await fetch(
      `${emu.url}/oauth/authorize?response_type=code&client_id=not-a-client-id&redirect_uri=${encodeURIComponent(REDIRECT)}`,
    );
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('No such application');
  });
});
