import crypto from 'node:crypto';
import type { Row } from './row';
import { isoTimestampTypes } from './timestamps';
import { pageFromSql, readerOf, rows, type PageRequest, type PageSource, type RowPage } from './paging';

/**
 * One customer (an app user) as the support desk reads them (docs/support.md): every row of the
 * tenant that names the app user, or whose subscription does. All in a tenant read (RLS): another
 * tenant's app user is simply not there.
 */

/**
 * Whether the tenant knows this app user at all: an entitlement, a subscription, a grant, a store registration or
 * provisional access.
 */
export async function customerExists(src: PageSource, appUserId: string): Promise<boolean> {
  const [r] = await readerOf(src).rows(
    `select exists (select 1 from entitlements where app_user_id = $1)
         or exists (select 1 from subscriptions where app_user_id = $1)
         or exists (select 1 from entitlement_grants where app_user_id = $1)
         or exists (select 1 from store_purchase_tokens where app_user_id = $1)
         or exists (select 1 from provisional_access where app_user_id = $1 and kind = 'grant')
         or exists (select 1 from customer_notes where app_user_id = $1)
         or exists (select 1 from subscriber_attributes where app_user_id = $1)
         or exists (select 1 from transfers where $1 in (from_app_user_id, to_app_user_id))
         or exists (select 1 from app_user_aliases where alias_id = $1)
         or exists (select 1 from app_user_aliases where app_user_id = $1) as found`,
    [appUserId],
  );
  return !!r?.found;
}

/** The attributes the app set on the user (RevenueCat's setAttributes; never read for access), by name. */
export function customerAttributes(src: PageSource, appUserId: string): Promise<Row[]> {
  return readerOf(src).rows(
    `select name, value, updated_at from subscriber_attributes where app_user_id = $1 order by name`,
    [appUserId],
    { types: isoTimestampTypes },
  );
}

/**
 * The app user's paid entitlements, each with the subscription it came from, the time its status
 * took hold (its latest recorded change) and the provider event last applied to it.
 */
export function customerEntitlements(src: PageSource, appUserId: string): Promise<Row[]> {
  return readerOf(src).rows(
    `select e.id, e.provider, e.state, e.is_sandbox, e.product_id, p.sku, e.subscription_id, e.expires_at, e.grace_until,
            e.created_at, e.updated_at,
            s.status as sub_status, s.mode as sub_mode, s.external_id as sub_external_id,
            s.customer_external_id as sub_customer_id, s.current_period_end as sub_current_period_end,
            s.canceled_at as sub_canceled_at, s.superseded_by as sub_superseded_by, s.updated_at as sub_updated_at,
            (select max(c.changed_at) from subscription_changes c where c.subscription_id = s.id) as sub_status_since,
            d.event_id as last_event_id, d.event_type as last_event_type, d.created_at as last_event_at,
            d.status as last_event_status
       from entitlements e
       left join products p on p.id = e.product_id
       left join subscriptions s on s.id = e.subscription_id
       left join lateral (select event_id, event_type, created_at, status from webhook_deliveries w
                           where w.subscription_id = s.id order by w.created_at desc limit 1) d on true
      where e.app_user_id = $1
      order by e.created_at desc, e.id desc`,
    [appUserId],
    { types: isoTimestampTypes },
  );
}

/**
 * The app user's provisional access not yet superseded by the workflow's write (docs/provisional-access.md), newest
 * first, the latest 20: counting, unconfirmed or withdrawn.
 */
export function customerProvisional(src: PageSource, appUserId: string): Promise<Row[]> {
  return readerOf(src).rows(
    `select a.id, a.provider, a.product_id, p.sku, a.is_sandbox, a.state, a.delivery_id, a.event_at, a.expires_at,
            a.created_at, a.updated_at, d.event_id, d.event_type
       from provisional_access a
       left join products p on p.id = a.product_id
       left join webhook_deliveries d on d.id = a.delivery_id
      where a.app_user_id = $1 and a.kind = 'grant'
      order by a.created_at desc, a.id desc limit 20`,
    [appUserId],
    { types: isoTimestampTypes },
  );
}

/** The app user's grants, newest first. */
export function customerGrants(src: PageSource, appUserId: string): Promise<Row[]> {
  return readerOf(src).rows(
    `select g.*, p.sku from entitlement_grants g left join products p on p.id = g.product_id
      where g.app_user_id = $1 order by g.created_at desc, g.id desc`,
    [appUserId],
    { types: isoTimestampTypes },
  );
}

/**
 * The order key of the outbound events about one app user, as `record_outbound_event` (migration
 * 018) computes it: the timeline finds them by its index.
 */
export function outboundSubjectKey(tenantId: string, appUserId: string): string {
  return `sub-${crypto.createHash('sha256').update(`${tenantId}:${appUserId}`, 'utf8').digest('hex').slice(0, 32)}`;
}

/**
 * Every kind of record in a customer's story as one row shape (`id`, `created_at`, `kind`,
 * `detail`), newest first: the provider events applied to their subscriptions, each status the
 * subscriptions took, their entitlements' present state, store purchase registrations, grants and
 * their end, the lines of imported files naming them, reconciliation repairs, and the outbound
 * deliveries about them. $1 is the app user, $2 their outbound order key.
 */
const TIMELINE = `(
  with subs as (
    select s.id, s.customer_external_id, s.external_id from subscriptions s where s.app_user_id = $1
    union
    -- A web purchase made without an app user is held under the buyer's email or customer id (activities/lifecycle.ts).
    select s.id, s.customer_external_id, s.external_id
      from entitlements e join subscriptions s on s.id = e.subscription_id where e.app_user_id = $1)
  select d.id, d.created_at, 'provider_event'::text as kind, jsonb_build_object(
      'provider', d.provider, 'event_type', d.event_type, 'event_id', d.event_id, 'outcome', d.status,
      'reason', d.reason, 'subscription_id', s.id, 'customer_key', coalesce(s.customer_external_id, s.external_id)) as detail
    from subs s join webhook_deliveries d on d.subscription_id = s.id
  union all
  select c.id, c.changed_at, 'subscription_change', jsonb_build_object(
      'provider', c.provider, 'mode', c.mode, 'subscription_id', s.id, 'from_status', c.from_status, 'to_status', c.to_status,
      'customer_key', coalesce(s.customer_external_id, s.external_id))
    from subs s join subscription_changes c on c.subscription_id = s.id
  union all
  select e.id, e.updated_at, 'entitlement_state', jsonb_build_object(
      'provider', e.provider, 'state', e.state, 'product_id', e.product_id, 'subscription_id', e.subscription_id)
    from entitlements e where e.app_user_id = $1
  union all
  select t.id, t.created_at, 'store_purchase_registered', jsonb_build_object(
      'provider', t.provider, 'token_hash', t.token_hash, 'product_id', t.product_id, 'entitlement_id', t.entitlement_id)
    from store_purchase_tokens t where t.app_user_id = $1
  union all
  select g.id, g.created_at, 'grant', jsonb_build_object(
      'grant_id', g.id, 'product_id', g.product_id, 'expires_at', g.expires_at, 'reason', g.reason, 'by', g.granted_by)
    from entitlement_grants g where g.app_user_id = $1
  union all
  select g.id, g.ended_at, 'grant_' || g.state, jsonb_build_object(
      'grant_id', g.id, 'product_id', g.product_id, 'by', g.revoked_by)
    from entitlement_grants g where g.app_user_id = $1 and g.ended_at is not null
  union all
  select r.id, r.created_at, 'reconciliation_repair', jsonb_build_object(
      'provider', r.provider, 'run_id', r.run_id, 'subscription_external_id', r.subscription_external_id,
      'held', r.held, 'provider_state', r.provider_state, 'applied', r.applied, 'run_workflow_id', r.workflow_id)
    from reconciliations r where r.app_user_id = $1
  union all
  select i.id, i.created_at, 'import_line', jsonb_build_object(
      'import_id', i.id, 'line', it.line, 'provider', it.provider, 'outcome', it.outcome, 'reason', it.reason)
    from import_items it join imports i on i.tenant_id = it.tenant_id and i.id = it.import_id where it.app_user_id = $1
  union all
  select od.id, od.created_at, 'outbound_delivery', jsonb_build_object(
      'event_id', ev.id, 'event_type', ev.type, 'endpoint_id', od.endpoint_id, 'status', od.status,
      'attempts', od.attempts, 'last_status_code', od.last_status_code)
    from outbound_events ev join outbound_deliveries od on od.event_id = ev.id where ev.order_key = $2
  union all
  -- A restore that moved (or asked to move) a purchase to or from them (docs/transfers.md): on both sides' timelines.
  select tr.id, tr.created_at, 'transfer', jsonb_build_object(
      'transfer_id', tr.id, 'status', tr.status, 'provider', tr.provider, 'from_app_user_id', tr.from_app_user_id,
      'to_app_user_id', tr.to_app_user_id, 'undo_until', tr.undo_until, 'policy', tr.policy)
    from transfers tr where $1 in (tr.from_app_user_id, tr.to_app_user_id)
) timeline`;

/** One page of the customer's timeline, read like every list (pageFromSql). */
export function customerTimeline(
  src: PageSource,
  tenantId: string,
  appUserId: string,
  page: PageRequest,
): Promise<RowPage> {
  return pageFromSql(
    src,
    {
      table: 'timeline',
      columns: 'timeline.*',
      from: TIMELINE,
      fromValues: [appUserId, outboundSubjectKey(tenantId, appUserId)],
      filters: {},
    },
    page,
    rows,
  );
}

/**
 * The completed transfers that brought the app user entitlements they still hold, newest first:
 * the customer view's "why" names them (docs/transfers.md).
 */
export function customerTransfersIn(src: PageSource, appUserId: string): Promise<Row[]> {
  return readerOf(src).rows(
    `select id, from_app_user_id, completed_at, undo_until, moved->'entitlement_ids' as entitlement_ids
       from transfers where to_app_user_id = $1 and status = 'completed'
      order by completed_at desc, id desc limit 50`,
    [appUserId],
    { types: isoTimestampTypes },
  );
}

/** App users whose subscription records carry this email (the support desk's search), at most `limit`. */
export async function appUsersByEmail(src: PageSource, email: string, limit = 20): Promise<string[]> {
  const found = await readerOf(src).rows(
    `select distinct app_user_id from subscriptions where email = $1 and app_user_id is not null
      order by app_user_id limit $2`,
    [email, limit],
  );
  return found.map((r) => r.app_user_id as string);
}

/**
 * The app user's recorded events after `after` in sequence order, bodies exactly as delivered
 * (docs/event-proofs.md), with how many follow in all. The chain's index (tenant, subject key,
 * sequence) answers both.
 */
export async function customerEventsAfter(
  src: PageSource,
  tenantId: string,
  appUserId: string,
  after: number,
  page: PageRequest,
): Promise<{ bodies: unknown[]; total: number }> {
  const reader = readerOf(src);
  const key = outboundSubjectKey(tenantId, appUserId);
  const found = await reader.rows(
    `select body from outbound_events where order_key = $1 and sequence > $2
      order by sequence limit $3 offset $4`,
    [key, after, page.limit, page.offset],
  );
  const [n] = await reader.rows(
    `select count(*)::bigint as n from outbound_events where order_key = $1 and sequence > $2`,
    [key, after],
  );
  return { bodies: found.map((r) => r.body), total: Number(n?.n ?? 0) };
}
