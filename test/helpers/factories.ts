import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { insertApiKey } from '../../db/api-keys';
import { upsertEntitlement } from '../../db/entitlements';
import { createProduct, setPrices, type ProductInput } from '../../db/products';
import { upsertStoreSubscription, type StoreSubscriptionWrite } from '../../db/subscriptions';
import { createTenant, type CreatedTenant } from '../../db/tenants';
import { withTenant } from '../../db/tenant-tx';
import type { PriceInput } from '../../domain/catalogue';
import type { EntitlementState } from '../../domain/entitlement';
import type { Scope } from '../../domain/scopes';
import { testDb } from './db';

/**
 * Test data through the service's own writes (db/), not hand-written inserts: a row made here is
 * the row the service would make, triggers, defaults and side notes (readiness, notify) included.
 * Each factory answers the created row. Those that write tenant data run in a tenant transaction
 * (withTenant: the app role, row-level security on) on the run's database, or in `trx` when given
 * (then inside the caller's transaction, which must be that tenant's). See docs/testing.md.
 */

/** Sign-up: a tenant with its default app, a test publishable key and an all-scope secret key. The name gets a random suffix. */
export function makeTenant(name = 'tenant'): Promise<CreatedTenant> {
  return createTenant(testDb(), { name: `${name}-${Math.random().toString(36).slice(2, 8)}` });
}

/** A secret key of the tenant with these scopes (db/api-keys.ts insertApiKey): `{ key_id, secret_key }`. */
export function makeApiKey(
  tenantId: string,
  scopes: Scope[],
  opts: { name?: string; expiresInSeconds?: number; requireApproval?: boolean } = {},
) {
  return insertApiKey(testDb(), tenantId, scopes, opts);
}

const inTenant = <T>(
  tenantId: string,
  trx: Knex.Transaction | undefined,
  work: (trx: Knex.Transaction) => Promise<T>,
) => (trx ? work(trx) : withTenant(testDb(), tenantId, work));

/**
 * A product (db/products.ts createProduct: name defaults to the SKU) and, with `prices`, its
 * prices (setPrices, which moves the product's version as an edit does). Answers the product row
 * as it stands after both.
 */
export function makeProduct(
  tenantId: string,
  input: Partial<ProductInput> & { prices?: PriceInput[] } = {},
  trx?: Knex.Transaction,
) {
  const { prices, ...product } = input;
  return inTenant(tenantId, trx, async (t) => {
    const { product: row } = await createProduct(t, tenantId, {
      sku: `sku_${crypto.randomBytes(3).toString('hex')}`,
      ...product,
    });
    if (!prices?.length) return row;
    await setPrices(t, tenantId, row.id, prices);
    return t('products').where({ id: row.id }).first();
  });
}

type SubscriptionFields = Partial<Omit<StoreSubscriptionWrite, 'tenantId'>>;

/**
 * A subscription record as the store paths write it (db/subscriptions.ts upsertStoreSubscription):
 * `store_android`, test mode, active, unless given. Answers the row.
 */
export function makeSubscription(tenantId: string, fields: SubscriptionFields = {}, trx?: Knex.Transaction) {
  return inTenant(tenantId, trx, async (t) => {
    const id = await upsertStoreSubscription(t, {
      tenantId,
      provider: 'store_android',
      externalId: `sub_${crypto.randomUUID()}`,
      status: 'active',
      mode: 'test',
      appUserId: null,
      productId: null,
      currentPeriodEnd: null,
      storeReadAt: new Date().toISOString(),
      ...fields,
    });
    return t('subscriptions').where({ id }).first();
  });
}

/**
 * An entitlement the way every path writes one: its subscription record (makeSubscription, with
 * `subscription` fields), then db/entitlements.ts upsertEntitlement (which notifies waiting SDK
 * reads once it commits), in one tenant transaction. Active, sandbox, no product, unless given.
 * Answers the entitlement row.
 */
export function makeEntitlement(
  tenantId: string,
  e: {
    appUserId: string;
    state?: EntitlementState;
    provider?: string;
    productId?: string | null;
    isSandbox?: boolean;
    expiresAt?: string | null;
    graceUntil?: string | null;
    subscription?: SubscriptionFields;
  },
  trx?: Knex.Transaction,
) {
  return inTenant(tenantId, trx, async (t) => {
    const provider = e.provider ?? e.subscription?.provider ?? 'store_android';
    const productId = e.productId ?? null;
    const sub = await makeSubscription(tenantId, { provider, appUserId: e.appUserId, productId, ...e.subscription }, t);
    const id = await upsertEntitlement(t, {
      tenantId,
      appUserId: e.appUserId,
      provider,
      productId,
      subscriptionId: sub.id,
      state: e.state ?? 'active',
      isSandbox: e.isSandbox ?? true,
      expiresAt: e.expiresAt ?? null,
      graceUntil: e.graceUntil ?? null,
    });
    return id ? t('entitlements').where({ id }).first() : undefined;
  });
}
