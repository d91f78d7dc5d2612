import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';

/**
 * The overview rollups are folded by a job the worker process runs (temporal/rollup-folding.ts),
 * no longer by the page view that reads them: no read writes. The job needs to know which
 * tenants have piled-up deltas, and the login role, which knows no tenant, cannot read any
 * tenant's rows. This function answers only those tenant ids (no figure), as its owner; the job
 * then folds each one in that tenant's own transaction under row-level security.
 *
 * Piled up: rows beyond one per key, in the window a page reads for the daily table (as
 * db/overview-rollups.ts counts them), more than `threshold` in any of the three tables.
 */
export async function up(knex: Knex): Promise<void> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  const path = `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
  await knex.raw(`create function overview_rollups_due(threshold int) returns setof uuid
    language sql stable security definer ${path} as $fn$
      select tenant_id from (
        select tenant_id, count(*) - count(distinct (mode, provider, status, product_id)) as piled
          from overview_subscription_counts group by tenant_id
        union all
        select tenant_id, count(*) - count(distinct (is_sandbox, provider, state))
          from overview_entitlement_counts group by tenant_id
        union all
        select tenant_id, count(*) - count(distinct (mode, provider, day))
          from overview_change_days where day > (now() at time zone 'UTC')::date - 90 group by tenant_id
      ) p
      where piled > threshold
      group by tenant_id
    $fn$`);
  await knex.raw('revoke execute on function overview_rollups_due(int) from public');
  await knex.raw(`grant execute on function overview_rollups_due(int) to ${LOGIN_ROLE}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists overview_rollups_due(int)');
}
