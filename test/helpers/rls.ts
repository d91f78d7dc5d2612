import type { Knex } from 'knex';
import { APP_ROLE } from '../../db/tenant-tx';

/**
 * The tenant tables as the database has them: every table of the schema with a `tenant_id`
 * column. The RLS and login-role tests walk this list, so a new tenant table is covered the
 * moment a migration makes it, with no hand-kept list to forget it in.
 */
export async function tenantTables(db: Knex, schema = 'public'): Promise<string[]> {
  const { rows } = await db.raw(
    `select c.relname as name
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ? and c.relkind in ('r', 'p')
        and exists (select 1 from pg_attribute a
                     where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped)
      order by c.relname`,
    [schema],
  );
  return rows.map((r: { name: string }) => r.name);
}

/**
 * What each tenant table of the schema lacks of the rule every one must follow
 * (db/migrations/tenant-policies.ts): row-level security enabled, enabled also for the table's
 * owner (FORCE), and a policy for the app role that reads and writes only the rows of the tenant
 * the transaction set (`app.tenant_id`). One line per lack; none when the schema holds the rule.
 */
export async function rlsGaps(db: Knex, schema = 'public'): Promise<string[]> {
  const { rows } = await db.raw(
    `select c.relname as name, c.relrowsecurity as enabled, c.relforcerowsecurity as forced,
            exists (select 1 from pg_policies p
                     where p.schemaname = n.nspname and p.tablename = c.relname and p.cmd = 'ALL'
                       and ?::name = any (p.roles)
                       and p.qual like '%tenant_id%app.tenant_id%'
                       and p.with_check like '%tenant_id%app.tenant_id%') as policy
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ? and c.relkind in ('r', 'p')
        and exists (select 1 from pg_attribute a
                     where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped)
      order by c.relname`,
    [APP_ROLE, schema],
  );
  const gaps: string[] = [];
  for (const r of rows as { name: string; enabled: boolean; forced: boolean; policy: boolean }[]) {
    if (!r.enabled) gaps.push(`${r.name}: row-level security not enabled`);
    if (!r.forced) gaps.push(`${r.name}: row-level security not forced (its owner would bypass it)`);
    if (!r.policy) gaps.push(`${r.name}: no policy holding ${APP_ROLE} to the tenant's rows`);
  }
  return gaps;
}
