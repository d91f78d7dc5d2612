import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { createConnection } from '../../db/connection-service';
import { createSession } from '../../db/dashboard-users';
import { withTenant } from '../../db/tenant-tx';
import { MAX_IMPORT_LINE_CHARS, MAX_IMPORT_LINE_COMMAS, MAX_IMPORT_LINES } from '../../domain/import-file';
import { approveChange } from '../../operations';
import type { Actor } from '../../operations/actor';
import { executeOperation } from '../../operations/execute';
import { createLogger } from '../../runtime/logger';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { call, newTenant } from '../helpers/api';
import { makeApiKey } from '../helpers/factories';
import { confirmedPremium } from '../helpers/premium';
import { testDb } from '../helpers/db';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { until } from '../helpers/until';

/**
 * Issue 42 (docs/limits.md, "Imports"): what a request may make an api process do with a file
 * (its first line, then one pass over its bounds, before anything is parsed; nothing at all for
 * a connection that cannot import it), one import created at a time per tenant and one running
 * per tenant and provider (409 `import_running`), and a held file kept sealed until approved.
 */
describe('import limits', () => {
  let s: StoreStack;
  const post = (key: string, body: unknown) =>
    call(s.api.apiUrl, '/imports', key, { method: 'POST', body: JSON.stringify(body) });
  const importsOf = async (tenantId: string) =>
    Number((await testDb()('imports').where({ tenant_id: tenantId }).count('* as n'))[0].n);
  const finished = (id: string) =>
    until(
      'the import finished',
      async () => (await call(s.api.apiUrl, `/imports/${id}`, s.tenant.secret_key)).body,
      (b) => b?.status !== 'running',
      90_000,
    );
  const iosPurchase = async (user: string) =>
    (
      await s.control.store_ios<{ transaction_id: string }>('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: s.accounts.store_ios,
        app_user_id: user,
      })
    ).transaction_id;

  beforeAll(async () => {
    s = await startStoreStack('import-limits');
  });
  afterAll(async () => s?.close());

  it('an absent or unproven connection is refused before the file is read past its first line', async () => {
    // Past every bound: had the file been looked at first, this would be 413.
    const huge = [
      'original_transaction_id,app_user_id',
      ...Array.from({ length: MAX_IMPORT_LINES + 1 }, () => '1,u'),
    ].join('\n');
    const unproven = await newTenant('import-unproven');
    const ios = await createEmulatorAccount(s.emulators.store_ios.url);
    await withTenant(testDb(), unproven.tenant_id, (trx) =>
      createConnection(trx, s.worker.vault, {
        provider: 'store_ios',
        account_ref: ios.account,
        credentials: ios.credentials,
      }),
    );
    const a = await post(unproven.secret_key, { provider: 'store_ios', csv: huge });
    expect([a.status, a.body.error, a.body.param]).toEqual([409, 'connection_not_proven', 'provider']);
    const absent = await newTenant('import-absent');
    const b = await post(absent.secret_key, {
      format: 'revenuecat',
      csv: huge.replace(
        'original_transaction_id,app_user_id',
        'rc_original_app_user_id,store,original_store_transaction_id',
      ),
    });
    expect([b.status, b.body.error]).toEqual([409, 'provider_not_connected']);
    expect(await importsOf(unproven.tenant_id)).toBe(0);
    expect(await importsOf(absent.tenant_id)).toBe(0);
  });

  it('a line with too many fields or characters refuses the whole file (413 import_too_large, nothing stored)', async () => {
    const before = await importsOf(s.tenant.tenant_id);
    const wide = ['original_transaction_id,app_user_id', '1,u', ','.repeat(MAX_IMPORT_LINE_COMMAS + 1)].join('\n');
    const r1 = await post(s.tenant.secret_key, { provider: 'store_ios', csv: wide });
    expect([r1.status, r1.body.error, r1.body.param]).toEqual([413, 'import_too_large', 'csv']);
    expect(r1.body.detail).toBe(`Line 3 has more than ${MAX_IMPORT_LINE_COMMAS + 1} fields.`);
    const long = ['purchase_token,app_user_id', `${'t'.repeat(MAX_IMPORT_LINE_CHARS)},u`].join('\n');
    const r2 = await post(s.tenant.secret_key, { provider: 'store_android', csv: long });
    expect([r2.status, r2.body.error]).toEqual([413, 'import_too_large']);
    expect(r2.body.detail).toBe(`Line 2 is longer than ${MAX_IMPORT_LINE_CHARS} characters.`);
    expect(await importsOf(s.tenant.tenant_id)).toBe(before);
  });

  it('one import being created per tenant at a time: another creation in flight (any replica) answers 409 import_running', async () => {
    const csv = 'original_transaction_id,app_user_id\n1000,creation_probe';
    const trx = await testDb().transaction();
    try {
      // What a creating transaction of another api replica holds.
      await trx.raw(`select pg_advisory_xact_lock(hashtextextended('import-create:' || ?, 0))`, [s.tenant.tenant_id]);
      const busy = await post(s.tenant.secret_key, { provider: 'store_ios', csv });
      expect([busy.status, busy.body.error]).toEqual([409, 'import_running']);
      expect(busy.body.detail).toMatch(/being created/);
    } finally {
      await trx.rollback();
    }
    const ok = await post(s.tenant.secret_key, { provider: 'store_ios', csv });
    expect(ok.status).toBe(202);
    await finished(ok.body.id);
  });

  it('the api reads no line: an accepted file waits sealed for the worker, one running import per provider (409 import_running)', async () => {
    const tx = await iosPurchase('limits_ios');
    const csv = `original_transaction_id,app_user_id\n${tx},limits_ios\n"broken,x\n`;
    await s.stopWorker();
    let first: string;
    try {
      const accepted = await post(s.tenant.secret_key, { provider: 'store_ios', csv });
      expect(accepted.status).toBe(202);
      first = accepted.body.id;
      // No line was read by the request: the file is kept whole, sealed, for the import's activity.
      const row = await testDb()('imports').where({ id: first }).first();
      expect(row.status).toBe('running');
      expect(String(row.file_sealed).startsWith('v1:')).toBe(true);
      expect(row.file_sealed).not.toContain(tx);
      expect(await testDb()('import_items').where({ import_id: first })).toEqual([]);
      // A second import of the same provider while it runs; another provider's may start.
      const again = await post(s.tenant.secret_key, { provider: 'store_ios', csv });
      expect([again.status, again.body.error, again.body.param]).toEqual([409, 'import_running', 'provider']);
      const android = await post(s.tenant.secret_key, {
        provider: 'store_android',
        csv: 'purchase_token,app_user_id\nnot-a-token,limits_android',
      });
      expect(android.status).toBe(202);
    } finally {
      await s.startWorker();
    }
    const done = await finished(first!);
    expect(done).toMatchObject({
      status: 'succeeded',
      imported: 1,
      refused: [{ line: 3, reason: 'The line is not valid CSV.' }],
    });
    expect((await testDb()('imports').where({ id: first! }).first()).file_sealed).toBeNull();
    const next = await post(s.tenant.secret_key, { provider: 'store_ios', csv });
    expect(next.status).toBe(202);
    await finished(next.body.id);
  });

  it('a held import keeps its Play tokens sealed: the change, GET /v1/changes/{id}, the Changes page and the audit never show one; approved, it imports', async () => {
    const token = (
      await s.control.store_android<{ purchase_token: string }>('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: s.accounts.store_android,
        app_user_id: 'held_play',
      })
    ).purchase_token;
    const key = await makeApiKey(s.tenant.tenant_id, ['imports:write', 'audit:read'], { requireApproval: true });
    const held = await post(key.secret_key, {
      provider: 'store_android',
      csv: `purchase_token,app_user_id\n${token},held_play`,
    });
    expect(held.status).toBe(202);
    const changeId: string = held.body.id;
    expect(JSON.stringify(held.body)).not.toContain(token);
    const row = await testDb()('held_changes').where({ id: changeId }).first();
    expect(JSON.stringify(row)).not.toContain(token);
    const got = await call(s.api.apiUrl, `/changes/${changeId}`, key.secret_key);
    expect(got.status).toBe(200);
    expect(got.body.input).toEqual({
      provider: 'store_android',
      csv: '2 lines (the header included), sealed until a person approves',
    });
    const [owner] = await testDb()('dashboard_users')
      .insert({
        tenant_id: s.tenant.tenant_id,
        email: `held-${crypto.randomUUID()}@example.test`,
        role: 'owner',
        password_hash: 'unused',
      })
      .returning(['id', 'tenant_id', 'email', 'role']);
    const session = await createSession(testDb(), owner);
    const page = await fetch(`${s.api.dashboardRoot}/changes/${changeId}`, {
      headers: { cookie: `${SESSION_COOKIE}=${session.token}` },
    });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('sealed until a person approves');
    expect(html).not.toContain(token);
    const person: Actor = { kind: 'user', tenantId: s.tenant.tenant_id, userId: owner.id, role: 'owner' };
    const approved = (await executeOperation(
      approveChange,
      person,
      { id: changeId },
      {
        requestId: crypto.randomUUID(),
        services: s.api.services!,
        log: createLogger('silent'),
        surface: 'dashboard',
      },
    )) as { status: string; outcome: { result: { id: string } } };
    expect(approved.status).toBe('applied');
    const done = await finished(approved.outcome.result.id);
    expect(done).toMatchObject({ status: 'succeeded', imported: 1 });
    await until(
      'held_play premium',
      async () => (await s.subscriber('held_play')).body,
      (b) => confirmedPremium(b),
    );
    const audit = await testDb()('audit_entries').where({ tenant_id: s.tenant.tenant_id });
    expect(JSON.stringify(audit)).not.toContain(token);
    expect(JSON.stringify(await testDb()('held_changes').where({ id: changeId }).first())).not.toContain(token);
  });
});
