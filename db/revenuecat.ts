import type { Knex } from 'knex';
import type { Mode } from '../domain/providers';
import { revenuecatKeyHint, type RevenueCatPlatform } from '../domain/revenuecat';
import { recordCustomerMerge } from './customer-merges';
import { notifyEntitlementChanged } from './entitlement-notify';
import { generateRevenueCatKey, hashSecretKey } from './key-material';
import type { TenantReader } from './tenant-read';
import type { Row } from './row';

/**
 * RevenueCat's client API (docs/revenuecat-compatibility.md): its public keys (table
 * `revenuecat_keys`, hashed), the products' entitlement names, subscriber attributes and the
 * aliases a logIn from an anonymous id makes.
 */

export interface MintedRevenueCatKey {
  key_id: string;
  public_key: string;
}

/** Mint a key for the tenant's app (its first when none is named). Run inside withTenant. */
export async function insertRevenueCatKey(
  trx: Knex.Transaction,
  k: { tenantId: string; appId?: string; platform: RevenueCatPlatform; mode: Mode },
): Promise<MintedRevenueCatKey> {
  const appId = k.appId ?? (await trx('apps').orderBy('created_at').first('id'))?.id;
  if (!appId) throw new Error('the tenant has no app');
  const key = generateRevenueCatKey(k.platform, k.mode);
  const [row] = await trx('revenuecat_keys')
    .insert({
      tenant_id: k.tenantId,
      app_id: appId,
      platform: k.platform,
      mode: k.mode,
      key_hash: hashSecretKey(key),
      key_hint: revenuecatKeyHint(key),
    })
    .returning('id');
  return { key_id: row.id, public_key: key };
}

/** Revoke a key; false when the tenant has no such live key. Run inside withTenant. */
export async function revokeRevenueCatKey(trx: Knex.Transaction, id: string): Promise<boolean> {
  return (await trx('revenuecat_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: trx.fn.now() })) > 0;
}

/**
 * The key a presented value hashes to, on the login role's connection before any tenant is
 * known (the `/revenuecat` gate); revoked keys are none.
 */
export async function findRevenueCatKey(
  db: Knex,
  key: string,
): Promise<
  | {
      id: string;
      tenant_id: string;
      app_id: string;
      platform: RevenueCatPlatform;
      mode: Mode;
      last_used_at: Date | null;
    }
  | undefined
> {
  return db('revenuecat_keys')
    .where({ key_hash: hashSecretKey(key) })
    .whereNull('revoked_at')
    .first('id', 'tenant_id', 'app_id', 'platform', 'mode', 'last_used_at');
}

/**
 * Record a key's use (api/auth.ts touchLastUsedWith decides when: at most once a minute), on the
 * login role's connection; a later value is never moved back.
 */
export async function markRevenueCatKeyUsed(db: Knex, keyId: string, at: Date): Promise<void> {
  await db('revenuecat_keys')
    .where({ id: keyId })
    .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', at))
    .update({ last_used_at: at });
}

/** Operator tooling (owner connection): the tenant a RevenueCat key id belongs to. */
export async function tenantOfRevenueCatKey(db: Knex, keyId: string): Promise<string | null> {
  return (await db('revenuecat_keys').where({ id: keyId }).first('tenant_id'))?.tenant_id ?? null;
}

/**
 * The app user ids whose access an id reads: the id an alias points to (or the id itself) and the
 * anonymous ids aliased to it (at most `limit`, oldest first), with when the service first heard
 * of any of them (their first subscription, attribute or alias). One statement, in a tenant read.
 */
export async function aliasedIds(
  reader: TenantReader,
  appUserId: string,
  limit: number,
): Promise<{ canonical: string; ids: string[]; firstSeen: Date | string | null }> {
  const [row] = await reader.rows(
    `with canon as (
       select coalesce((select app_user_id from app_user_aliases where alias_id = $1), $1) as id
     ), al as (
       select a.alias_id, a.created_at from app_user_aliases a, canon
        where a.app_user_id = canon.id order by a.created_at limit $2
     ), ids as (select id from canon union all select alias_id from al)
     select (select id from canon) as canonical,
            (select coalesce(json_agg(alias_id order by created_at), '[]'::json) from al) as aliases,
            least(
              (select min(created_at) from subscriptions where app_user_id in (select id from ids)),
              (select min(updated_at) from subscriber_attributes where app_user_id in (select id from ids)),
              (select min(created_at) from app_user_aliases where app_user_id in (select id from ids))
            ) as first_seen`,
    [appUserId, limit],
  );
  const canonical = row.canonical as string;
  return {
    canonical,
    ids: [canonical, ...(row.aliases as string[])],
    firstSeen: (row.first_seen as Date | string | null) ?? null,
  };
}

/**
 * Record that `aliasId` (an anonymous id) is `appUserId`, unless the anonymous id is already
 * someone's (an alias once made stays, RevenueCat's own rule) or `appUserId` holds `max` aliases
 * already. Answers whether this call made it. Run inside withTenant.
 */
export async function insertAlias(
  trx: Knex.Transaction,
  tenantId: string,
  aliasId: string,
  appUserId: string,
  max: number,
): Promise<boolean> {
  const { rows } = await trx.raw(
    `insert into app_user_aliases (tenant_id, alias_id, app_user_id)
     select ?, ?, ? where (select count(*) from app_user_aliases where app_user_id = ?) < ?
     on conflict (tenant_id, alias_id) do nothing
     returning id`,
    [tenantId, aliasId, appUserId, appUserId, max],
  );
  if (rows.length === 0) return false;
  // Announced once: an alias already there (the same sign-in again) inserts nothing and says nothing.
  await recordCustomerMerge(trx, tenantId, aliasId, appUserId);
  // Both ids now answer one customer: a premium check held on either wakes, re-reads and follows the other.
  await notifyEntitlementChanged(trx, tenantId, [aliasId, appUserId]);
  return true;
}

/** Whom an id is an alias of, if anyone. Run inside withTenant. */
export async function aliasOf(trx: Knex.Transaction, id: string): Promise<string | null> {
  return (await trx('app_user_aliases').where({ alias_id: id }).first('app_user_id'))?.app_user_id ?? null;
}

/** Every id the customer `id` is known by: the one it names (or itself) and its aliases. Run inside withTenant. */
export async function customerIds(trx: Knex.Transaction, id: string): Promise<string[]> {
  const canonical = (await aliasOf(trx, id)) ?? id;
  const aliases = await trx('app_user_aliases').where({ app_user_id: canonical }).pluck('alias_id');
  return [canonical, ...aliases];
}

/** Whether two ids are one customer: the same id, or one an alias of the other (or both of a third). */
export async function sameCustomer(trx: Knex.Transaction, a: string, b: string): Promise<boolean> {
  if (a === b) return true;
  const { rows } = await trx.raw(
    `select coalesce((select app_user_id from app_user_aliases where alias_id = ?), ?)
          = coalesce((select app_user_id from app_user_aliases where alias_id = ?), ?) as same`,
    [a, a, b, b],
  );
  return rows[0].same as boolean;
}

/**
 * The facts a backend merge of `from` into `into` is judged on (domain/aliases.ts `mergeVerdict`),
 * read under a lock on both ids' aliases, taken in one order: two merges into one id count right,
 * and two merges of the same pair in opposite directions run one after the other (the second is
 * refused as already merged) instead of making a cycle or deadlocking on the ids' event chains.
 * Run inside withTenant.
 */
export async function mergeFacts(trx: Knex.Transaction, tenantId: string, from: string, into: string) {
  for (const id of [from, into].sort())
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`aliases:${tenantId}:${id}`]);
  const { rows } = await trx.raw(
    `select (select app_user_id from app_user_aliases where alias_id = ?) as from_alias_of,
            (select app_user_id from app_user_aliases where alias_id = ?) as into_alias_of,
            (select count(*) from app_user_aliases where app_user_id in (?, ?))::int as aliases`,
    [from, into, from, into],
  );
  const r = rows[0];
  return {
    from,
    into,
    fromAliasOf: (r.from_alias_of as string | null) ?? null,
    intoAliasOf: (r.into_alias_of as string | null) ?? null,
    aliasesAfter: Number(r.aliases) + 1,
  };
}

/**
 * Merge `from` into `into`: `from` becomes an alias of `into`, and the ids that were aliases of
 * `from` now name `into` (reads follow one step). Rows stay where they were written. Run inside
 * withTenant, after `mergeVerdict` allowed it.
 */
export async function mergeAppUsers(trx: Knex.Transaction, tenantId: string, from: string, into: string) {
  await trx('app_user_aliases').where({ app_user_id: from }).update({ app_user_id: into });
  await trx('app_user_aliases').insert({ tenant_id: tenantId, alias_id: from, app_user_id: into });
  await recordCustomerMerge(trx, tenantId, from, into);
  // Both customers are one now: a check held on any of their ids wakes and follows the other's ids.
  await notifyEntitlementChanged(trx, tenantId, [from, into]);
}

/** Whether the id has any row of its own (access, subscriptions, attributes, aliases). Run inside withTenant. */
export async function appUserKnown(trx: Knex.Transaction, appUserId: string): Promise<boolean> {
  const { rows } = await trx.raw(
    `select exists (select 1 from subscriptions where app_user_id = ?)
         or exists (select 1 from entitlements where app_user_id = ?)
         or exists (select 1 from subscriber_attributes where app_user_id = ?)
         or exists (select 1 from app_user_aliases where app_user_id = ?) as known`,
    [appUserId, appUserId, appUserId, appUserId],
  );
  return rows[0].known as boolean;
}

export interface AttributeWrite {
  name: string;
  /** null removes the attribute (RevenueCat's way of unsetting one). */
  value: string | null;
  setAtMs: number;
}

/**
 * Set an app user's attributes: a later `updated_at_ms` wins, an earlier one is ignored; a null
 * value removes. Answers false, writing nothing, when the user would hold more than `maxPerUser`.
 * Run inside withTenant.
 */
export async function upsertAttributes(
  trx: Knex.Transaction,
  tenantId: string,
  appUserId: string,
  writes: AttributeWrite[],
  maxPerUser: number,
): Promise<boolean> {
  // One writer per app user at a time, so the count below holds.
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`attrs:${tenantId}:${appUserId}`]);
  for (const w of writes) {
    if (w.value === null) {
      await trx('subscriber_attributes')
        .where({ app_user_id: appUserId, name: w.name })
        .where('set_at_ms', '<=', w.setAtMs)
        .del();
      continue;
    }
    await trx('subscriber_attributes')
      .insert({ tenant_id: tenantId, app_user_id: appUserId, name: w.name, value: w.value, set_at_ms: w.setAtMs })
      .onConflict(['tenant_id', 'app_user_id', 'name'])
      .merge({ value: trx.raw('excluded.value'), set_at_ms: trx.raw('excluded.set_at_ms'), updated_at: trx.fn.now() })
      .where('subscriber_attributes.set_at_ms', '<=', trx.raw('excluded.set_at_ms'));
  }
  const { n } = (await trx('subscriber_attributes').where({ app_user_id: appUserId }).count({ n: '*' }).first()) as {
    n: string | number;
  };
  return Number(n) <= maxPerUser;
}

/** The live catalogue's products by SKU (name, period): offerings and the web SDK's products. Run inside withTenant. */
export function productsBySku(trx: Knex.Transaction, skus: readonly string[]): Promise<Row[]> {
  return trx('products')
    .whereIn('sku', [...skus])
    .where({ active: true })
    .whereNull('retired_at')
    .select('id', 'sku', 'name', 'tier');
}

/** The pricing rows (country, currency, amount in minor units) of products. Run inside withTenant. */
export function pricesOf(trx: Knex.Transaction, productIds: readonly string[]): Promise<Row[]> {
  return trx('prices')
    .whereIn('product_id', [...productIds])
    .select('product_id', 'country', 'currency', 'amount_minor');
}

/** The tenant's RevenueCat-format keys, newest first, with their app's name: hints only. Run inside withTenant. */
export function listRevenueCatKeys(trx: Knex.Transaction): Promise<Row[]> {
  return trx('revenuecat_keys as k')
    .join('apps as a', 'a.id', 'k.app_id')
    .orderBy('k.created_at', 'desc')
    .orderBy('k.id')
    .select(
      'k.id',
      'k.platform',
      'k.mode',
      'k.key_hint',
      'k.app_id',
      'a.name as app_name',
      'k.created_at',
      'k.revoked_at',
      'k.last_used_at',
    );
}

/** One key by id (RLS: another tenant's is none). Run inside withTenant. */
export function revenueCatKeyById(trx: Knex.Transaction, id: string): Promise<Row | undefined> {
  return trx('revenuecat_keys').where({ id }).first('id', 'platform', 'mode', 'key_hint', 'revoked_at');
}
