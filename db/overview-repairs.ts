import type { Knex } from 'knex';

export interface RepairCounts {
  provider: string;
  last_24h: number;
  last_7d: number;
}

/**
 * The overview's health section: reconciliation repairs per provider in the last 24 hours and 7
 * days (docs/reconciliation.md), in the caller's tenant transaction (row-level security scopes
 * it; the (tenant_id, created_at) index bounds it to a week of rows). A read: it writes nothing.
 * Repairs carry no mode: a run reads every mode the connection has a credential for.
 */
export async function repairCounts(trx: Knex.Transaction): Promise<RepairCounts[]> {
  const { rows } = await trx.raw(
    `select provider,
            count(*) filter (where created_at > now() - interval '24 hours')::int as last_24h,
            count(*)::int as last_7d
       from reconciliations
      where created_at > now() - interval '7 days'
      group by provider
      order by provider`,
  );
  return rows as RepairCounts[];
}
