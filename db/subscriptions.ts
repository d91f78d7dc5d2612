import type { Knex } from 'knex';
import type { Row } from './row';
import type { TenantReader } from './tenant-read';
import { isoTimestampTypes } from './timestamps';
import { MAX_ALIASES } from '../domain/aliases';
import type { Mode } from '../domain/providers';
import type { SubscriptionStatus, SubscriptionView } from '../domain/subscription';
import { productIdSql } from './entitlements';
import { pageFromSql, rows, type PageRequest, type PageSource, type RowPage } from './paging';
import {
  LIFECYCLE_DELIVERIES_CTE,
  LIFECYCLE_DELIVERY_LAGS_SQL,
  lifecycleDeliveriesBindings,
  type LifecycleDeliveries,
} from './webhook-deliveries';

/** Subscription records, written by the web lifecycle and the store purchase paths (always in a tenant transaction). */

export interface WrittenSubscription {
  id: string;
  product_id: string | null;
  email: string | null;
  /** Whom the record names now: the app user who held it before, when the events name another (docs/transfers.md). */
  app_user_id: string | null;
  /** When the batch's deliveries were marked in the same statement: the seconds since receipt of each it processed. */
  lags?: number[];
}

/**
 * The web lifecycle's record of one derived subscription, in one statement: the product and the
 * buyer's email are looked up inside the upsert (the email from the delivery of the event that
 * named it last; the address never travels through a workflow). Given `deliveries` (the batch's
 * last subscription), the same statement marks the batch's deliveries processed
 * (db/webhook-deliveries.ts), the events of this subscription naming it: no round trip of their
 * own. Marked before the entitlement's write instead of after: that write does not read them, and
 * a failure of either rolls both back. Answers whom the record names (see `app_user_id` below).
 */
export async function upsertLifecycleSubscription(
  trx: Knex.Transaction,
  tenantId: string,
  provider: string,
  s: SubscriptionView,
  deliveries?: LifecycleDeliveries,
): Promise<WrittenSubscription> {
  const upsert = `insert into subscriptions (tenant_id, provider, external_id, customer_external_id, status, mode, email, app_user_id, product_id,
       trial_started_at, trial_ended_at, current_period_end, canceled_at, country, status_since, updated_at)
     values (?, ?, ?, ?, ?, ?,
       (select buyer_email from webhook_deliveries where provider = ? and event_id = ?),
       ?, ${productIdSql(provider)}, ?, ?, ?, ?, ?, ?, now())
     on conflict (tenant_id, provider, external_id) do update set
       customer_external_id = excluded.customer_external_id, status = excluded.status, mode = excluded.mode,
       -- An address once known stays until an event names another (a workflow may not hold the event that named it).
       email = coalesce(excluded.email, subscriptions.email),
       -- A record once naming an app user keeps naming them: events naming another are a re-link, which the
       -- tenant's restore policy decides (activities/web-relink.ts), moving the record when it says so.
       app_user_id = coalesce(subscriptions.app_user_id, excluded.app_user_id), product_id = excluded.product_id, trial_started_at = excluded.trial_started_at,
       trial_ended_at = excluded.trial_ended_at, current_period_end = excluded.current_period_end, canceled_at = excluded.canceled_at,
       -- A country once said stays, like the address: later events (a renewal) often say none.
       country = coalesce(excluded.country, subscriptions.country),
       -- The provider's time of the deciding event: the history rows of a move are dated at it.
       status_since = excluded.status_since,
       updated_at = now()
     returning id, product_id, email, app_user_id`;
  const { rows } = await trx
    .raw(
      deliveries
        ? `with s as (${upsert}), ${LIFECYCLE_DELIVERIES_CTE} select s.*, ${LIFECYCLE_DELIVERY_LAGS_SQL} as lags from s`
        : upsert,
      [
        tenantId,
        provider,
        s.external_id,
        s.customer_id,
        s.status,
        s.mode,
        provider,
        s.email_event_id,
        s.app_user_id,
        s.sku,
        s.sku,
        s.trial_started_at,
        s.trial_ended_at,
        s.current_period_end,
        s.canceled_at,
        s.country ?? null,
        s.status_since,
        ...(deliveries ? lifecycleDeliveriesBindings(provider, deliveries) : []),
      ],
    )
    .options({ prepare: true });
  return rows[0] as WrittenSubscription;
}

/** A store purchase's record as last written: its status and the time of the store read it came from. */
export async function findStoreSubscription(
  trx: Knex.Transaction,
  provider: string,
  externalId: string,
): Promise<
  | {
      id: string;
      status: SubscriptionStatus;
      store_read_at: Date | string | null;
      current_period_end: Date | string | null;
    }
  | undefined
> {
  return trx('subscriptions')
    .where({ provider, external_id: externalId })
    .first('id', 'status', 'store_read_at', 'current_period_end');
}

export interface StoreSubscriptionWrite {
  tenantId: string;
  provider: string;
  externalId: string;
  status: SubscriptionStatus;
  mode: Mode;
  appUserId: string | null;
  productId: string | null;
  currentPeriodEnd: string | null;
  storeReadAt: string;
  /** The buyer's country when the store said it (kept when a later read says none). */
  country?: string | null;
}

/** A store purchase's record from the store's answer; answers its id. */
export async function upsertStoreSubscription(trx: Knex.Transaction, w: StoreSubscriptionWrite): Promise<string> {
  const [sub] = await trx('subscriptions')
    .insert({
      tenant_id: w.tenantId,
      provider: w.provider,
      external_id: w.externalId,
      status: w.status,
      mode: w.mode,
      app_user_id: w.appUserId,
      product_id: w.productId,
      current_period_end: w.currentPeriodEnd,
      store_read_at: w.storeReadAt,
      country: w.country ?? null,
      // A store read gives a state, not an event time: a move is dated at the store's answer.
      status_since: w.storeReadAt,
      updated_at: trx.fn.now(),
    })
    .onConflict(['tenant_id', 'provider', 'external_id'])
    .merge({
      status: trx.raw('excluded.status'),
      mode: trx.raw('excluded.mode'),
      app_user_id: trx.raw('excluded.app_user_id'),
      product_id: trx.raw('excluded.product_id'),
      current_period_end: trx.raw('excluded.current_period_end'),
      store_read_at: trx.raw('excluded.store_read_at'),
      country: trx.raw('coalesce(excluded.country, subscriptions.country)'),
      status_since: trx.raw('excluded.status_since'),
      updated_at: trx.raw('excluded.updated_at'),
    })
    .returning('id');
  return sub.id as string;
}

/**
 * The subscription records page, each row with its product's SKU. Not the Subscription model:
 * its path cost over the 5 % bar in bench/models-vs-knex.ts (bench/RESULTS.md).
 */
export function subscriptionPage(
  src: PageSource,
  filters: { email?: string; status?: string; provider?: string; mode?: string },
  page: PageRequest,
): Promise<RowPage> {
  return pageFromSql(
    src,
    {
      table: 'subscriptions',
      columns: 'subscriptions.*, products.sku',
      from: 'subscriptions left join products on products.id = subscriptions.product_id',
      filters,
    },
    page,
    rows,
  );
}

/** How many subscribers the tenant has: one per app user (else email, else the lone record). */
export async function subscriberCount(trx: Knex.Transaction): Promise<number> {
  const { n } = (await trx('subscriptions')
    .countDistinct({ n: trx.raw('coalesce(app_user_id, email, id::text)') })
    .first()) as { n: number | string };
  return Number(n);
}

/**
 * The ids one customer is known by, as a CTE over `$1` (domain/aliases.ts): the id an alias names
 * (or `$1` itself) and the ids aliased to it, at most MAX_ALIASES, oldest first. The aliases are
 * probed by that id as a query of its own (OFFSET 0), for the reason `ofCustomer` gives below: as
 * a condition beside the lookup it was planned as a walk of every alias of the tenant.
 */
const CUSTOMER_IDS_CTE = `customer as (
  select coalesce((select app_user_id from app_user_aliases where alias_id = $1), $1) as id
), ids as (
  select id from customer
  union all
  (select a.alias_id from customer c
     cross join lateral (select alias_id, created_at from app_user_aliases where app_user_id = c.id offset 0) a
    order by a.created_at limit ${MAX_ALIASES})
)`;

/**
 * The rows of `table` (as `t`) stored under any id of the customer (the CTE above): one probe per
 * id, each planned on its own as `t.app_user_id = <that id>`, as the read of one app user was
 * before aliases; `where` (optional) only narrows the probe to a partial index by app user id. A
 * join of the table with the ids instead (`in (select id from ids)`), or any other condition inside
 * the probe that an index also leads with (the side, the mode, the expiry), is planned as a walk of
 * every row of the tenant's side filtered by id whenever the table's statistics say it is small,
 * as they do while a tenant starts and between two analyzes of a fast growing table: a premium
 * check that grew with the tenant (bench/RESULTS.md, "Payment to premium: what this tree added per
 * purchase"; test/sdk/premium-read-plan.test.ts). The caller filters the rows after. OFFSET 0 keeps
 * each probe a query of its own.
 */
const ofCustomer = (table: string, columns = 't.*', where = 'true') =>
  `(select distinct id from ids) c cross join lateral (select ${columns} from ${table} t
     where t.app_user_id = c.id and ${where} offset 0) t`;

/**
 * The access rows of one customer on one side (sandbox or real) — every id it is known by (an
 * anonymous id signed in as an identified one, a backend merge: domain/aliases.ts): their
 * entitlements with their product's catalogue facts (sku, the entitlement it unlocks, store ids),
 * the active grants, and the provisional access of that side while it counts, oldest first. A
 * side's rows never show on the other: a sandbox purchase of an alias stays out of the live
 * answer. The one statement both client APIs read access with. Run in a tenant read.
 */
export function readAccessRows(reader: TenantReader, appUserId: string, mode: Mode) {
  // Plain statements in a tenant read (db/tenant-read.ts), times as the API's ISO strings: the
  // client apps' premium check is the busiest read there is, and the same path as the hot page.
  return reader.rows(
    `with ${CUSTOMER_IDS_CTE}
     select ents.*, p.sku, p.entitlement, p.android_store_product_id, p.ios_store_product_id from (
       -- Paid access of the key's side, then access granted by hand while it lasts (docs/support.md): a grant is
       -- the tenant's own decision about a person, so both keys see it.
       select t.provider, t.state, t.is_sandbox, t.product_id, t.expires_at, t.grace_until, t.updated_at,
              'paid' as source, t.created_at, t.id
         from ${ofCustomer('entitlements')}
        where t.is_sandbox = $2
       union all
       select null, t.state, $2, t.product_id, t.expires_at, null, t.updated_at, 'grant', t.created_at, t.id
         from ${ofCustomer('entitlement_grants', 't.*', "t.state = 'active'")}
       union all
       -- Provisional access while it counts (docs/provisional-access.md): the workflow's write supersedes it.
       select t.provider, 'active', t.is_sandbox, t.product_id, t.expires_at, null, t.updated_at, 'provisional',
              t.created_at, t.id
         from ${ofCustomer('provisional_access', 't.*', "t.kind = 'grant'")}
        where t.is_sandbox = $2 and t.state = 'provisional' and t.expires_at > now()) ents
     left join products p on p.id = ents.product_id
     order by ents.created_at`,
    [appUserId, mode === 'test'],
    { types: isoTimestampTypes },
  );
}

/**
 * What GET /v1/sdk/subscribers/{id} reads of one app user: its customer's access rows (above) and
 * the statuses of its subscriptions in the key's mode (they set how long the SDK may cache the
 * answer). A held check (`withIds`) also needs the ids the customer is known by, to wake on a
 * write under any of them: the same statement answers them too (the plain check, the busiest read,
 * keeps the cheaper one). Run in a tenant read.
 */
export async function readSubscriberRows(
  reader: TenantReader,
  appUserId: string,
  mode: Mode,
  opts: { withIds?: boolean } = {},
): Promise<{ ents: Row[]; subs: Pick<SubscriptionView, 'status'>[]; customerIds: string[] }> {
  const ents = await readAccessRows(reader, appUserId, mode);
  if (!opts.withIds) {
    const subs = (await reader.rows(
      `with ${CUSTOMER_IDS_CTE} select t.status from ${ofCustomer('subscriptions', 't.status, t.mode')} where t.mode = $2`,
      [appUserId, mode],
    )) as Pick<SubscriptionView, 'status'>[];
    return { ents, subs, customerIds: [appUserId] };
  }
  const [row] = await reader.rows(
    `with ${CUSTOMER_IDS_CTE}
     select array(select id from ids) as ids,
            array(select t.status from ${ofCustomer('subscriptions', 't.status, t.mode')} where t.mode = $2) as statuses`,
    [appUserId, mode],
  );
  return {
    ents,
    subs: (row.statuses as SubscriptionView['status'][]).map((status) => ({ status })),
    customerIds: row.ids as string[],
  };
}
