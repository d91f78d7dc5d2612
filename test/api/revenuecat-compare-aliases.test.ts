import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyWith, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeEntitlement, makeProduct } from '../helpers/factories';
import { billingCli } from '../helpers/billing-cli';
import { withTenant } from '../../db/tenant-tx';
import { insertAlias } from '../../db/revenuecat';

/**
 * `billing revenuecat:compare` against the real API with RevenueCat's delivered Transactions feed
 * (semicolon-separated, `rc_original_app_user_id` / `rc_last_seen_app_user_id_alias`,
 * `effective_end_time`): a purchase held here under an anonymous id that logged in as the
 * customer (an alias here) compares with RevenueCat's line for that customer.
 */
describe('billing revenuecat:compare follows aliases', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let dir: string;
  beforeAll(async () => {
    api = await startApi();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc-compare-aliases-'));
  });
  afterAll(async () => {
    await api?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a line under the identified id agrees with access held here under its anonymous alias; without customers:read it is a difference, said so', async () => {
    const t = await newTenant('rc-compare-aliases');
    const pro = await makeProduct(t.tenant_id, { sku: 'pro_m' });
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('products').where({ id: pro.id }).update({ entitlement: 'pro' }),
    );
    const ends = new Date(Date.now() + 20 * 86_400_000).toISOString();
    await makeEntitlement(t.tenant_id, {
      appUserId: '$RCAnonymousID:here-1',
      provider: 'psp_a',
      productId: pro.id,
      expiresAt: ends,
    });
    await withTenant(testDb(), t.tenant_id, (trx) =>
      insertAlias(trx, t.tenant_id, '$RCAnonymousID:here-1', 'user-17', 10),
    );
    const day = ends.slice(0, 19).replace('T', ' ');
    fs.writeFileSync(
      path.join(dir, 'transactions.csv'),
      [
        'rc_original_app_user_id;rc_last_seen_app_user_id_alias;entitlement_identifiers;end_time;effective_end_time;is_sandbox',
        `$RCAnonymousID:rc-1;user-17;pro;${day};${day};true`,
      ].join('\n'),
    );
    const billing = (secret: string) =>
      billingCli(['revenuecat:compare', '--file', 'transactions.csv', '--sandbox'], {
        cwd: dir,
        env: { ...process.env, BILLING_API_URL: api.apiUrl, BILLING_SECRET_KEY: secret },
      });
    const full = await keyWith(t.tenant_id, ['subscribers:read', 'products:read', 'customers:read']);
    const narrow = await keyWith(t.tenant_id, ['subscribers:read', 'products:read']);
    const [followed, unfollowed] = await Promise.all([billing(full.secret_key), billing(narrow.secret_key)]);
    expect([followed.code, followed.stdout.trim()], followed.stderr).toEqual([
      0,
      'Compared 1 app users (sandbox): 1 agree, 0 differ.',
    ]);
    expect(unfollowed.code).toBe(2);
    expect(unfollowed.stdout).toContain('+ $RCAnonymousID:here-1 pro: active here until');
    expect(unfollowed.stdout).toContain('- user-17 pro: active on RevenueCat until');
    expect(unfollowed.stderr).toContain('lacks customers:read');
    // Another tenant's key sees none of this tenant's customers or aliases: everything is RevenueCat's only.
    const other = await newTenant('rc-compare-aliases-b');
    const otherKey = await keyWith(other.tenant_id, ['subscribers:read', 'products:read', 'customers:read']);
    const cross = await billing(otherKey.secret_key);
    expect([cross.code, cross.stdout.trim().split('\n')]).toEqual([
      2,
      [
        expect.stringMatching(/^- user-17 pro: active on RevenueCat until/),
        'Compared 1 app users (sandbox): 0 agree, 1 differ.',
      ],
    ]);
  }, 120_000);
});
