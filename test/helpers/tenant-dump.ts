import { testDb } from './db';

/**
 * Every row the database holds for a tenant, as text (each row of every table with a `tenant_id`,
 * as Postgres prints it; binary columns as hex): what a test greps for a value that must be gone.
 */
export async function tenantRowsAsText(tenantId: string): Promise<string> {
  const { rows: tables } = await testDb().raw(
    `select c.table_name from information_schema.columns c
       join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = 'public' and c.column_name = 'tenant_id' and t.table_type = 'BASE TABLE'
      order by 1`,
  );
  const out: string[] = [];
  for (const { table_name: table } of tables as Array<{ table_name: string }>) {
    const { rows } = await testDb().raw(`select t::text as row from ?? t where t.tenant_id = ?`, [table, tenantId]);
    for (const r of rows as Array<{ row: string }>) out.push(`${table}: ${r.row}`);
  }
  return out.join('\n');
}

/** A value as a test looks for it in such a dump: as text, and as the hex of its UTF-8 (a binary column). */
export const dumpForms = (value: string) => [value, Buffer.from(value, 'utf8').toString('hex')];
