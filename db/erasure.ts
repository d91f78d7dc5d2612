import type { Knex } from 'knex';
import type { ErasureCounts } from '../domain/erasure';
import { readerOf, type PageSource } from './paging';
import type { Row } from './row';
import { isoTimestampTypes } from './timestamps';

/**
 * Erasing one app user's personal data in the tenant's transaction (docs/event-proofs.md,
 * "Erasure"). `$1` is the app user; the ids erased with them are theirs and the anonymous ids
 * merged into them (`app_user_aliases.alias_id`); their subscriptions are those naming one of the
 * ids and those their entitlements hang from (a web purchase held under them). Billing records
 * (subscriptions, entitlements, grants, amounts, the events' chains) stay; the values go:
 *
 * - subscriber attributes and support notes of every id: deleted;
 * - the aliases naming the app user, either way: deleted;
 * - the buyer's email on those subscriptions and on the provider events applied to them (or
 *   received with that email): emptied (the stored payloads were redacted on receipt);
 * - every event about the ids and those emails: its `data` replaced by its proof form
 *   (`event_proof_form`), which keeps its `hash`.
 *
 * One statement, so the erasure is whole or nothing; the record of it names counts only.
 */
const ERASE = `
with ids as (
  select $1::text as id
  union select a.alias_id from app_user_aliases a where a.app_user_id = $1),
subs as (
  select s.id, s.email from subscriptions s where s.app_user_id in (select id from ids)
  union select s.id, s.email from entitlements e join subscriptions s on s.id = e.subscription_id
   where e.app_user_id in (select id from ids)),
emails as (select distinct email from subs where email is not null),
attrs as (delete from subscriber_attributes where app_user_id in (select id from ids) returning 1),
notes as (delete from customer_notes where app_user_id in (select id from ids) returning 1),
aliases as (delete from app_user_aliases where app_user_id = $1 or alias_id = $1 returning 1),
sub_emails as (update subscriptions set email = null where id in (select id from subs) and email is not null returning 1),
deliveries as (update webhook_deliveries set buyer_email = null
  where buyer_email is not null
    and (subscription_id in (select id from subs) or buyer_email in (select email from emails)) returning 1),
chains as (
  select 'sub-' || left(encode(sha256(convert_to(current_setting('app.tenant_id') || ':' || subject, 'UTF8')), 'hex'), 32) as key
    from (select id as subject from ids union select email from emails) x),
bodies as (update outbound_events o set body = jsonb_set(o.body, '{data}', event_proof_form(o.body->'data'))
  where o.order_key in (select key from chains) and o.body->'data' <> event_proof_form(o.body->'data') returning 1)
select (select count(*) from attrs)::int as attributes, (select count(*) from aliases)::int as aliases,
       (select count(*) from notes)::int as notes,
       ((select count(*) from sub_emails) + (select count(*) from deliveries))::int as emails,
       (select count(*) from bodies)::int as event_bodies`;

/**
 * Erases the app user's personal data and records it, unless they were erased before: answers the
 * erasure's record, and whether this call made it. A per-customer advisory lock serialises two
 * requests for one app user, so the second answers the first's record.
 */
export async function eraseCustomer(
  trx: Knex.Transaction,
  tenantId: string,
  appUserId: string,
  erasedBy: string,
): Promise<{ row: Row; erased: boolean }> {
  await trx.raw(`select pg_advisory_xact_lock(hashtextextended('customer-erase:' || ? || ':' || ?, 0))`, [
    tenantId,
    appUserId,
  ]);
  const before = await erasureOf(trx, appUserId);
  const [removed] = (await readerOf(trx).rows(ERASE, [appUserId])) as unknown as ErasureCounts[];
  if (before) {
    // Erased before: anything written since (an attribute set again) goes too, and is counted on.
    const total = Object.fromEntries(
      Object.entries(before.removed as ErasureCounts).map(([k, v]) => [k, v + removed[k as keyof ErasureCounts]]),
    );
    const [row] = await trx('customer_erasures')
      .where({ app_user_id: appUserId })
      .update({ removed: total })
      .returning(COLUMNS);
    return { row: { ...row, erased_at: before.erased_at }, erased: false };
  }
  const [row] = await trx('customer_erasures')
    .insert({ tenant_id: tenantId, app_user_id: appUserId, removed, erased_by: erasedBy })
    .returning(COLUMNS);
  return { row, erased: true };
}

const COLUMNS = ['app_user_id', 'removed', 'erased_by', 'erased_at'];

/** The app user's erasure, if there was one. */
export async function erasureOf(src: PageSource, appUserId: string): Promise<Row | undefined> {
  const [row] = await readerOf(src).rows(
    `select app_user_id, removed, erased_by, erased_at from customer_erasures where app_user_id = $1`,
    [appUserId],
    { types: isoTimestampTypes },
  );
  return row;
}
