import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_IMPORT_LINES } from '../../domain/import-file';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { call } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';

/**
 * Store imports: a file of Play purchase tokens or App Store original transaction ids, each
 * looked up at the store's server API (the emulators), for purchases the service never heard of
 * (bought in the sandbox, never registered, no notification sent).
 */
describe('import a file of store purchases (Play tokens, App Store transactions, a RevenueCat export)', () => {
  let s: StoreStack;
  const post = (body: unknown) =>
    call(s.api.apiUrl, '/imports', s.tenant.secret_key, { method: 'POST', body: JSON.stringify(body) });
  const finished = (id: string) =>
    until(
      'the import finished',
      async () => (await call(s.api.apiUrl, `/imports/${id}`, s.tenant.secret_key)).body,
      (b) => b?.status !== 'running',
      60_000,
    );
  const playPurchase = async (user: string, account = s.accounts.store_android) =>
    (
      await s.control.store_android<{ purchase_token: string }>('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account,
        app_user_id: user,
      })
    ).purchase_token;
  const iosPurchase = async (user: string, account = s.accounts.store_ios) =>
    (
      await s.control.store_ios<{ transaction_id: string }>('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account,
        app_user_id: user,
      })
    ).transaction_id;
  const premium = (user: string) =>
    until(
      `${user} premium`,
      async () => (await s.subscriber(user)).body,
      (b) => confirmedPremium(b),
    );

  beforeAll(async () => {
    s = await startStoreStack('imports-stores');
  });
  afterAll(async () => s?.close());

  it('Play tokens: the buyers become premium; a malformed line and a token of another app are refused by line, the rest imported', async () => {
    const a = await playPurchase('play_imp_a');
    const b = await playPurchase('play_imp_b');
    const otherApp = await createEmulatorAccount(s.emulators.store_android.url);
    const foreign = await playPurchase('play_imp_c', otherApp.account);
    for (const u of ['play_imp_a', 'play_imp_b']) expect((await s.subscriber(u)).body.is_premium).toBe(false);
    const csv = [
      'purchase_token,app_user_id',
      `${a},play_imp_a`,
      '"broken,play_x',
      `${b},play_imp_b`,
      `${foreign},play_imp_c`,
      `,nobody`,
    ].join('\n');
    const started = await post({ provider: 'store_android', csv });
    expect(started.status).toBe(202);
    const done = await finished(started.body.id);
    expect(done).toMatchObject({ provider: 'store_android', status: 'succeeded', imported: 2 });
    expect(done.refused.map((r: { line: number }) => r.line)).toEqual([3, 5, 6]);
    expect(done.refused[1].reason).toMatch(/does not know this purchase/);
    await premium('play_imp_a');
    await premium('play_imp_b');
    expect((await s.subscriber('play_imp_c')).body.is_premium).toBe(false);
    // The token itself is stored sealed, never in clear.
    const stored = await testDb()('import_items').where({ import_id: started.body.id });
    expect(JSON.stringify(stored)).not.toContain(a);
    // The claim keeps it sealed too, for a reconciliation's re-read (docs/reconciliation.md): a refresh reads it.
    const claims = await testDb()('store_purchase_tokens').where({
      tenant_id: s.tenant.tenant_id,
      app_user_id: 'play_imp_a',
    });
    expect(claims.map((c) => String(c.purchase_token_enc).slice(0, 3))).toEqual(['v1:']);
    expect(JSON.stringify(claims)).not.toContain(a);
    const refreshed = await call(s.api.apiUrl, '/customers/play_imp_a/refresh', s.tenant.secret_key, {
      method: 'POST',
    });
    expect(refreshed.body).toMatchObject({ compared: 1, repairs: [], skipped: [] });
  });

  it('App Store original transaction ids: premium; one of another bundle refused; re-running changes nothing', async () => {
    const tx = await iosPurchase('ios_imp_a');
    const otherBundle = await createEmulatorAccount(s.emulators.store_ios.url);
    const foreign = await iosPurchase('ios_imp_b', otherBundle.account);
    const csv = `original_transaction_id,app_user_id\n${tx},ios_imp_a\n${foreign},ios_imp_b\n`;
    const done = await finished((await post({ provider: 'store_ios', csv })).body.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      imported: 1,
      refused: [{ line: 3, reason: expect.any(String) }],
    });
    await premium('ios_imp_a');
    const rows = () =>
      testDb()('entitlements')
        .where({ tenant_id: s.tenant.tenant_id, provider: 'store_ios' })
        .orderBy('app_user_id')
        .select('app_user_id', 'state', 'expires_at', 'subscription_id');
    const before = await rows();
    const again = await finished((await post({ provider: 'store_ios', csv })).body.id);
    expect(again).toMatchObject({ status: 'succeeded', imported: 1 });
    expect(await rows()).toEqual(before);
    // The buyer's page names each file line that brought them in, newest first, with the import's workflow.
    const lines = (await call(s.api.apiUrl, '/customers/ios_imp_a', s.tenant.secret_key)).body.timeline.data.filter(
      (e: { kind: string }) => e.kind === 'import_line',
    );
    expect(lines.map((e: { detail: unknown }) => e.detail)).toEqual([
      expect.objectContaining({ import_id: again.id, line: 2, provider: 'store_ios', outcome: 'imported' }),
      expect.objectContaining({ import_id: done.id, line: 2, provider: 'store_ios', outcome: 'imported' }),
    ]);
    expect(lines[0].workflow_id).toBe(`import-${s.tenant.tenant_id}-${again.id}`);
  });

  it('App Store lookups are paced under the Server API limit the emulator enforces (5 a second in the sandbox): every line imported, within it', async () => {
    const users = Array.from({ length: 14 }, (_, i) => `ios_paced_${i}`);
    const txs = [];
    for (const u of users) txs.push(await iosPurchase(u));
    const csv = ['original_transaction_id,app_user_id', ...txs.map((tx, i) => `${tx},${users[i]}`)].join('\n');
    await s.control.store_ios('POST', '/rate-limit', { enabled: true });
    try {
      const done = await finished((await post({ provider: 'store_ios', csv })).body.id);
      expect(done).toMatchObject({ status: 'succeeded', imported: users.length, refused_count: 0 });
      const seen = await s.control.store_ios<{
        scopes: { key: string; accepted: number; limited: number; first_at: number; last_at: number }[];
      }>('GET', '/rate-limit');
      const statuses = seen.scopes.find((x) => x.key === 'server-api:test:subscriptions')!;
      expect(statuses.accepted).toBe(users.length);
      // 14 calls at 5 a second: the last two wait for a third second.
      expect(statuses.last_at - statuses.first_at).toBeGreaterThanOrEqual(1900);
      // Arrivals bunched on a loaded machine may meet a 429 now and then; the line asks again after it.
      expect(statuses.limited).toBeLessThanOrEqual(2);
    } finally {
      await s.control.store_ios('DELETE', '/rate-limit');
    }
  });

  it('a RevenueCat transactions export: App Store rows looked up by original_store_transaction_id; others refused with the way in', async () => {
    const tx = await iosPurchase('rc_user');
    const csv = [
      'rc_original_app_user_id,rc_last_seen_app_user_id_alias,product_identifier,store,store_transaction_id,original_store_transaction_id,is_sandbox',
      `$RCAnonymousID:1,rc_user,premium_monthly,app_store,${tx},${tx},true`,
      `$RCAnonymousID:1,rc_user,premium_monthly,app_store,${tx}9,${tx},true`,
      'rc_other,,premium_monthly,play_store,GPA.1-2,GPA.1-2,true',
      'rc_other,,pro,stripe,in_1,sub_1,true',
    ].join('\n');
    const started = await post({ format: 'revenuecat', csv });
    const done = await finished(started.body.id);
    expect(done).toMatchObject({ provider: 'revenuecat', status: 'succeeded', imported: 1 });
    expect(done.refused.map((r: { line: number }) => r.line)).toEqual([4, 5]);
    expect(done.refused[0].reason).toMatch(/purchase_token/);
    await premium('rc_user');
  });

  it('a file without the header columns, or over the size, is refused before any work starts', async () => {
    const before = Number((await testDb()('imports').where({ tenant_id: s.tenant.tenant_id }).count('* as n'))[0].n);
    const wrong = await post({ provider: 'store_android', csv: 'token,user\nabc,u' });
    expect([wrong.status, wrong.body.error, wrong.body.param]).toEqual([400, 'invalid_request', 'csv']);
    const big = [
      'purchase_token,app_user_id',
      ...Array.from({ length: MAX_IMPORT_LINES + 1 }, (_, i) => `t${i},u`),
    ].join('\n');
    const tooBig = await post({ provider: 'store_android', csv: big });
    expect([tooBig.status, tooBig.body.error, tooBig.body.param]).toEqual([413, 'import_too_large', 'csv']);
    expect(Number((await testDb()('imports').where({ tenant_id: s.tenant.tenant_id }).count('* as n'))[0].n)).toBe(
      before,
    );
  });
});
