import { describe, expect, it } from 'vitest';
import { withTenant } from '../../db/tenant-tx';
import { releaseWorkTurn, takeWorkTurn } from '../../db/work-leases';
import { WORK_TURNS_PER_TENANT } from '../../domain/import-concurrency';
import { newTenant } from '../helpers/api';
import { appDb, testDb } from '../helpers/db';

/**
 * Issue 42, item 5: a tenant's imports and reconciliations hold at most WORK_TURNS_PER_TENANT of
 * the worker's activity slots at once, counted on leases in the database (so across every
 * worker process), as the app role under row-level security. Another tenant's turns are its own.
 */
describe('the per-tenant share of the worker (tenant_work_leases)', () => {
  const take = (tenantId: string, holder: string, leaseMs = 60_000) =>
    withTenant(appDb(), tenantId, (trx) =>
      takeWorkTurn(trx, tenantId, holder, { cap: WORK_TURNS_PER_TENANT, leaseMs }),
    );

  it('grants a tenant its share, refuses one more, gives a turn back when released or run out; other tenants unaffected', async () => {
    const a = await newTenant('turns-a');
    const b = await newTenant('turns-b');
    const holders = Array.from({ length: WORK_TURNS_PER_TENANT }, (_, i) => `import-${a.tenant_id}-x:${i}`);
    for (const h of holders) expect(await take(a.tenant_id, h)).toBe(true);
    expect(await take(a.tenant_id, `import-${a.tenant_id}-y:1`)).toBe(false);
    // A holder asking again (a retried attempt) keeps its turn.
    expect(await take(a.tenant_id, holders[0])).toBe(true);
    // Tenant B has its own share.
    expect(await take(b.tenant_id, `import-${b.tenant_id}-x:1`)).toBe(true);
    await withTenant(appDb(), a.tenant_id, (trx) => releaseWorkTurn(trx, holders[0]));
    expect(await take(a.tenant_id, `import-${a.tenant_id}-y:1`)).toBe(true);
    expect(await take(a.tenant_id, `import-${a.tenant_id}-z:1`)).toBe(false);
    // A lease that ran out (a worker died holding it) counts no more.
    await testDb()('tenant_work_leases')
      .where({ tenant_id: a.tenant_id, holder: holders[1] })
      .update({ lease_until: new Date(Date.now() - 1000) });
    expect(await take(a.tenant_id, `import-${a.tenant_id}-z:1`)).toBe(true);
    expect(
      Number(
        (
          await testDb()('tenant_work_leases')
            .where({ tenant_id: a.tenant_id })
            .where('lease_until', '>', new Date())
            .count('* as n')
        )[0].n,
      ),
    ).toBe(WORK_TURNS_PER_TENANT);
  });
});
