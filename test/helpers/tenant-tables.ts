import type { Knex } from 'knex';

/**
 * Every table of the schema that carries `tenant_id`, read from the database itself: a table a
 * migration adds is covered by the tests that loop over this (row-level security forced, the
 * login role closed) without anyone listing it.
 */
export async function tenantTables(db: Knex): Promise<string[]> {
  const rows: string[] = await db('information_schema.columns as c')
    .join('information_schema.tables as t', function () {
      this.on('t.table_schema', 'c.table_schema').andOn('t.table_name', 'c.table_name');
    })
    .where({ 'c.column_name': 'tenant_id', 'c.table_schema': 'public', 't.table_type': 'BASE TABLE' })
    .pluck('c.table_name');
  return rows.sort();
}
