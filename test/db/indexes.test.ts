import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';

/** Every list filter the spec names, and every list's newest-first order, has an index led by tenant_id. */
const FILTERS: Record<string, string[]> = {
  products: ['sku', 'type', 'created_at'],
  provider_connections: ['provider', 'created_at'],
  sync_events: ['run_id', 'provider', 'status', 'created_at'],
  subscriptions: ['email', 'status', 'provider', 'mode', 'created_at'],
  entitlements: ['app_user_id', 'provider', 'state', 'created_at'],
  coupons: ['code', 'created_at'],
  webhook_deliveries: ['provider', 'status', 'event_type', 'mode', 'created_at'],
  audit_entries: ['action', 'actor_type', 'created_at'],
};

describe('indexes behind list filters', () => {
  for (const [table, columns] of Object.entries(FILTERS)) {
    it(`${table}: ${columns.join(', ')}`, async () => {
      const { rows } = await testDb().raw(
        `select array_agg(a.attname::text order by k.ord) as cols
           from pg_index i
           join pg_class c on c.oid = i.indrelid
           cross join lateral unnest(i.indkey) with ordinality as k(attnum, ord)
           join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
          where c.relname = ?
          group by i.indexrelid`,
        [table],
      );
      const indexes = rows.map((r: { cols: string[] }) => r.cols);
      for (const col of columns) {
        // Usable for `tenant_id = ? and col = ?`: tenant_id first, the column next (or right after another equality column).
        const covered = indexes.some((cols: string[]) => cols[0] === 'tenant_id' && cols.slice(1, 3).includes(col));
        expect([table, col, covered]).toEqual([table, col, true]);
      }
    });
  }
});
