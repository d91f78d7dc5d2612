import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { readSubscriberRows } from '../../db/subscriptions';
import type { TenantReader } from '../../db/tenant-read';
import { withTenant } from '../../db/tenant-tx';
import { insertAlias } from '../../db/revenuecat';
import { makeEntitlement, makeProduct, makeTenant } from '../helpers/factories';
import { testDb } from '../helpers/db';

/**
 * The premium check's read (GET /v1/sdk/subscribers/{id}, plain and held) reads the customer's own
 * rows, whatever else the tenant holds: each table is probed by app user id, once per id the
 * customer is known by. Counted in plans and rows, never in time. The run's database is never
 * analyzed (no autovacuum), which is how a table looks between two analyzes of a fast growing one:
 * the statistics say it is small. A join of a table with the customer's ids was then planned as a
 * walk of every row of the tenant's side, filtered by id (a read that grew with the tenant).
 */

type Plan = { 'Node Type': string; 'Relation Name'?: string; 'Actual Rows'?: number; 'Actual Loops'?: number } & {
  'Index Cond'?: string;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  Plans?: Plan[];
};
const nodes = (p: Plan): Plan[] => [p, ...(p.Plans ?? []).flatMap(nodes)];
const CUSTOMER_TABLES = [
  'entitlements',
  'entitlement_grants',
  'provisional_access',
  'subscriptions',
  'app_user_aliases',
];

/** A reader that runs each statement for real and keeps its plan (`explain analyze`), in the tenant's transaction. */
function explainingReader(tenantId: string, plans: Plan[]): TenantReader {
  return {
    async rows(sql, values) {
      return withTenant(testDb(), tenantId, async (trx) => {
        // `$n` as knex's `?`, each occurrence with its own binding.
        const bindings: unknown[] = [];
        const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
          bindings.push(values[Number(n) - 1]);
          return '?';
        });
        const { rows: plan } = await trx.raw(`explain (analyze, format json) ${text}`, bindings as never);
        plans.push(plan[0]['QUERY PLAN'][0].Plan);
        return (await trx.raw(text, bindings as never)).rows;
      });
    },
  };
}

describe("the premium check's read with a large tenant behind it", () => {
  let tenantId: string;
  const run = crypto.randomBytes(3).toString('hex');
  const customer = `customer_${run}`;
  const alias = `anon_${run}`;

  beforeAll(async () => {
    tenantId = (await makeTenant('premium read plan')).tenant_id;
    const product = await makeProduct(tenantId, { sku: `pro_${run}` });
    // 3,000 other app users of the same side, each with a subscription and an entitlement, and as
    // many live provisional grants: what the read must not walk.
    await withTenant(testDb(), tenantId, async (trx) => {
      await trx.raw(
        `with s as (insert into subscriptions (tenant_id, provider, external_id, status, mode, app_user_id, product_id)
                    select ?, 'psp_a', 'sub_' || g, 'active', 'test', 'other_' || g, ? from generate_series(1, 3000) g
                    returning id, app_user_id)
         insert into entitlements (tenant_id, app_user_id, provider, product_id, subscription_id, state, is_sandbox)
         select ?, app_user_id, 'psp_a', ?, id, 'active', true from s`,
        [tenantId, product.id, tenantId, product.id],
      );
      await trx.raw(
        `insert into entitlement_grants (tenant_id, app_user_id, product_id, state, reason, granted_by, expires_at)
         select ?, 'other_' || g, ?, 'active', 'test', 'test', now() + interval '30 days' from generate_series(1, 3000) g`,
        [tenantId, product.id],
      );
      await trx.raw(
        `insert into provisional_access (tenant_id, provider, kind, customer_key, app_user_id, product_id, is_sandbox,
                                         event_at, expires_at)
         select ?, 'psp_a', 'grant', 'cus_' || g, 'other_' || g, ?, true, now(), now() + interval '1 hour'
           from generate_series(1, 3000) g`,
        [tenantId, product.id],
      );
      await trx.raw(
        `insert into app_user_aliases (tenant_id, alias_id, app_user_id)
         select ?, 'other_anon_' || g, 'other_' || g from generate_series(1, 3000) g`,
        [tenantId],
      );
    });
    // The customer: a purchase under an anonymous id that then signed in as `customer`.
    await makeEntitlement(tenantId, { appUserId: alias, productId: product.id, provider: 'psp_a' });
    await makeEntitlement(tenantId, { appUserId: customer, productId: product.id, provider: 'store_android' });
    await withTenant(testDb(), tenantId, (trx) => insertAlias(trx, tenantId, alias, customer, 10));
  });

  for (const held of [false, true])
    it(`${held ? 'a held check' : 'a plain check'} probes each table by app user id and reads no other customer's row`, async () => {
      const plans: Plan[] = [];
      const { ents, subs, customerIds } = await readSubscriberRows(explainingReader(tenantId, plans), alias, 'test', {
        withIds: held,
      });
      // Both ids' rows, asked by the alias: the customer's answer.
      expect(ents.filter((e) => e.source === 'paid')).toHaveLength(2);
      expect(subs).toHaveLength(2);
      if (held) expect(customerIds).toEqual([customer, alias]);
      expect(plans).toHaveLength(2);
      const scans = plans.flatMap(nodes).filter((n) => CUSTOMER_TABLES.includes(n['Relation Name'] ?? ''));
      expect(scans.length).toBeGreaterThan(0);
      for (const scan of scans) {
        // An index probe by app user id (or alias id), never a walk of the tenant's rows.
        expect(scan['Node Type'], JSON.stringify(scan)).toMatch(/^Index (Only )?Scan$/);
        expect(String(scan['Index Cond']), JSON.stringify(scan)).toMatch(/app_user_id|alias_id/);
        expect((scan['Actual Rows'] ?? 0) * (scan['Actual Loops'] ?? 1)).toBeLessThanOrEqual(2);
        expect(scan['Rows Removed by Filter'] ?? 0).toBeLessThanOrEqual(2);
      }
      for (const n of plans.flatMap(nodes)) expect(n['Rows Removed by Join Filter'] ?? 0).toBeLessThanOrEqual(2);
    });
});
