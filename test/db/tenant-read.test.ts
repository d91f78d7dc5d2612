import { afterAll, describe, expect, inject, it } from 'vitest';
import { createKnex } from '../../db/knex';
import { readAsTenant } from '../../db/tenant-read';
import { newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';

/**
 * readAsTenant (the hot page's tenant read, without knex's transaction object) keeps every
 * promise withTenant keeps: RLS by the tenant set for the transaction only, nothing written, and
 * a connection that goes back to the pool clean — on one connection, so each read reuses it.
 */
describe('tenant read', () => {
  const app = createKnex(inject('appDatabaseUrl'), { max: 1 });
  afterAll(async () => app.destroy());

  it('sees only its tenant’s rows, and leaves no tenant or role behind on the connection', async () => {
    const [a, b] = [await newTenant('read-a'), await newTenant('read-b')];
    await testDb()('entitlements').insert([
      { tenant_id: a.tenant_id, app_user_id: 'u_a', provider: 'psp_a', state: 'active' },
      { tenant_id: b.tenant_id, app_user_id: 'u_b', provider: 'psp_a', state: 'active' },
    ]);
    const sql = 'select tenant_id, app_user_id from entitlements where provider = $1';
    expect(await readAsTenant(app, a.tenant_id, (r) => r.rows(sql, ['psp_a']))).toEqual([
      { tenant_id: a.tenant_id, app_user_id: 'u_a' },
    ]);
    expect(await readAsTenant(app, b.tenant_id, (r) => r.rows(sql, ['psp_a']))).toEqual([
      { tenant_id: b.tenant_id, app_user_id: 'u_b' },
    ]);
    const after = (
      await app.raw("select coalesce(current_setting('app.tenant_id', true), '') as tenant, current_user as role")
    ).rows[0];
    expect(after.tenant).toBe('');
    expect(after.role).not.toBe('billing_app');
    // Back as the login role, which reads no tenant table on its own.
    await expect(app('entitlements').first()).rejects.toThrow(/permission denied/);
  });

  it('cannot write: the statement is refused and nothing is stored', async () => {
    const t = await newTenant('read-only');
    await expect(
      readAsTenant(app, t.tenant_id, (r) =>
        r.rows(
          "insert into entitlements (tenant_id, app_user_id, provider, state) values ($1, 'u', 'psp_a', 'active')",
          [t.tenant_id],
        ),
      ),
    ).rejects.toThrow(/read-only transaction/);
    expect(await testDb()('entitlements').where({ tenant_id: t.tenant_id })).toEqual([]);
    // The failed read was rolled back: the one connection serves the next read.
    expect(await readAsTenant(app, t.tenant_id, (r) => r.rows('select 1 as one', []))).toEqual([{ one: 1 }]);
  });

  it('a reader kept after its read ended is refused instead of reaching the pooled connection', async () => {
    const [a, b] = [await newTenant('read-kept'), await newTenant('read-next')];
    let kept: Parameters<Parameters<typeof readAsTenant>[2]>[0] | undefined;
    await readAsTenant(app, a.tenant_id, async (r) => {
      kept = r;
    });
    await readAsTenant(app, b.tenant_id, async () => {
      await expect(kept!.rows("select current_setting('app.tenant_id') as t", [])).rejects.toThrow(/read has ended/);
    });
  });

  it('a connection whose transaction could not be ended is discarded, not handed to the next read', async () => {
    const t = await newTenant('read-killed');
    await expect(
      readAsTenant(app, t.tenant_id, async (r) => {
        const [{ pid }] = await r.rows('select pg_backend_pid() as pid', []);
        await testDb().raw('select pg_terminate_backend(?)', [pid]);
        return r.rows('select 1', []);
      }),
    ).rejects.toThrow();
    const [{ tenant }] = await readAsTenant(app, t.tenant_id, (r) =>
      r.rows("select current_setting('app.tenant_id') as tenant", []),
    );
    expect(tenant).toBe(t.tenant_id);
  });

  it('refuses a tenant id that is not a uuid', async () => {
    await expect(readAsTenant(app, "x'); select 1; --", async () => 1)).rejects.toThrow(/must be a uuid/);
  });
});
