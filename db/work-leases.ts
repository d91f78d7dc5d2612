import type { Knex } from 'knex';

/**
 * The turns of a tenant's imports and reconciliations in the worker's activity slots
 * (migration 052, domain/import-concurrency.ts): a lease per page that runs. Counted under a lock
 * per tenant, so two pages asking at once are counted one after the other, across every worker
 * process. Every function runs in the tenant's transaction.
 */

/** A turn for `holder` (renewed when it has one): true when fewer than `cap` live leases of the tenant were held. */
export async function takeWorkTurn(
  trx: Knex.Transaction,
  tenantId: string,
  holder: string,
  o: { cap: number; leaseMs: number },
): Promise<boolean> {
  await trx.raw(`select pg_advisory_xact_lock(hashtextextended('work-turns:' || ?, 0))`, [tenantId]);
  const renewed = await trx('tenant_work_leases')
    .where({ holder })
    .andWhere('lease_until', '>', trx.fn.now())
    .update({ lease_until: trx.raw(`now() + (? * interval '1 millisecond')`, [o.leaseMs]) });
  if (renewed > 0) return true;
  const [{ n }] = await trx('tenant_work_leases')
    .where('lease_until', '>', trx.fn.now())
    .count<{ n: string }[]>('* as n');
  if (Number(n) >= o.cap) return false;
  await trx.raw(
    `insert into tenant_work_leases (tenant_id, holder, lease_until) values (?, ?, now() + (? * interval '1 millisecond'))
     on conflict (tenant_id, holder) do update set lease_until = excluded.lease_until`,
    [tenantId, holder, o.leaseMs],
  );
  return true;
}

/** The page's turn ends (its lease, and any run out, removed). */
export async function releaseWorkTurn(trx: Knex.Transaction, holder: string): Promise<void> {
  await trx('tenant_work_leases').where({ holder }).orWhere('lease_until', '<', trx.fn.now()).del();
}
