import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { ErasureCounts } from '../domain/erasure';
import { readerOf, type PageSource } from './paging';
import type { Row } from './row';
import { isoTimestampTypes } from './timestamps';

/**
 * An event's data once erased: its proof form with the ids hashed too. A body recorded before the
 * ids were part of the proof form (no `"proof": 2`) gets the same form without the mark.
 */
const ERASED_DATA = `case when (o.body->'data'->>'proof') = '2' then event_proof_form(o.body->'data')
  else event_proof_form(o.body->'data' || '{"proof": 2}'::jsonb) - 'proof' end`;

/** The hash a receiver recomputes from `data` as stored. */
const hashOf = (data: string) => `encode(sha256(convert_to(jcs(event_proof_form(${data} - 'hash')), 'UTF8')), 'hex')`;

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
 *   (`event_proof_form`, with the ids as their SHA-256), which keeps its `hash` for every event
 *   marked `"proof": 2`; an older one whose hash no longer checks is marked `redacted`.
 *
 * Then `renameIds` keeps the billing records under each id's pseudonym. All in the caller's
 * transaction, so the erasure is whole or nothing; the record of it names counts only.
 */
const ERASE = `
with ids as (select unnest($1::text[]) as id),
subs as (
  select s.id, s.email from subscriptions s where s.app_user_id in (select id from ids)
  union select s.id, s.email from entitlements e join subscriptions s on s.id = e.subscription_id
   where e.app_user_id in (select id from ids)),
emails as (select distinct email from subs where email is not null),
attrs as (delete from subscriber_attributes where app_user_id in (select id from ids) returning 1),
notes as (delete from customer_notes where app_user_id in (select id from ids) returning 1),
aliases as (delete from app_user_aliases where app_user_id in (select id from ids) or alias_id in (select id from ids) returning 1),
sub_emails as (update subscriptions set email = null where id in (select id from subs) and email is not null returning 1),
deliveries as (update webhook_deliveries set buyer_email = null
  where buyer_email is not null
    and (subscription_id in (select id from subs) or buyer_email in (select email from emails)) returning 1),
chains as (select ${chainKey('subject')} as key
    from (select id as subject from ids union select email from emails) x),
erased as (select o.id, o.body, ${ERASED_DATA} as data from outbound_events o where o.order_key in (select key from chains)),
bodies as (update outbound_events o
     set body = jsonb_set(e.body, '{data}', e.data)
             || case when ${hashOf('e.data')} = e.data->>'hash' or e.data->>'hash' is null then '{}'::jsonb
                     else '{"redacted": true}'::jsonb end
    from erased e where o.id = e.id and o.body->'data' <> e.data returning 1)
select (select count(*) from attrs)::int as attributes, (select count(*) from aliases)::int as aliases,
       (select count(*) from notes)::int as notes,
       ((select count(*) from sub_emails) + (select count(*) from deliveries))::int as emails,
       (select count(*) from bodies)::int as event_bodies`;

/** The key of a subject's chain (record_outbound_event's `order_key`). */
function chainKey(subject: string): string {
  return `'sub-' || left(encode(sha256(convert_to(current_setting('app.tenant_id') || ':' || ${subject}, 'UTF8')), 'hex'), 32)`;
}

/**
 * Each id's rows kept under its pseudonym: `$1` the ids, `$2` their pseudonyms, in order. The
 * tables that name an app user; the chain (its numbering row and its events' key) moves with them,
 * so the pseudonym's events go on from where the erased id's ended and the id starts afresh.
 */
const RENAMES: Array<[table: string, column: string]> = [
  ['subscriptions', 'app_user_id'],
  ['entitlements', 'app_user_id'],
  ['entitlement_grants', 'app_user_id'],
  ['store_purchase_tokens', 'app_user_id'],
  ['provisional_access', 'app_user_id'],
  ['import_items', 'app_user_id'],
  ['reconciliations', 'app_user_id'],
  ['transfers', 'from_app_user_id'],
  ['transfers', 'to_app_user_id'],
  ['transfer_refusals', 'from_app_user_id'],
  ['transfer_refusals', 'to_app_user_id'],
  ['chart_customer_facts', 'customer'],
  ['chart_subscription_facts', 'customer'],
  ['customer_event_sequences', 'subject'],
  // A chain a merge ended names the customer it continues on (075).
  ['customer_event_sequences', 'merged_into'],
];

const MAP = `(select * from unnest($1::text[], $2::text[]) as m(id, ps))`;

async function renameIds(trx: Knex.Transaction, ids: string[], pseudonyms: string[]): Promise<void> {
  for (const [table, column] of RENAMES)
    await trx.raw(
      `update ${table} t set ${column} = m.ps from ${MAP.replace(/\$(\d)/g, '?')} m where t.${column} = m.id`,
      [ids, pseudonyms],
    );
  await trx.raw(
    `update outbound_events o set order_key = ${chainKey('m.ps')} from ${MAP.replace(/\$(\d)/g, '?')} m
      where o.order_key = ${chainKey('m.id')}`,
    [ids, pseudonyms],
  );
  // A provider's stored payload (redacted of emails and names on receipt) may still name the app user
  // in a field of its own (a checkout's client reference): the deliveries of their subscriptions.
  await trx.raw(
    `update webhook_deliveries w set payload = replace(w.payload::text, to_jsonb(m.id)::text, to_jsonb(m.ps)::text)::jsonb
       from ${MAP.replace(/\$(\d)/g, '?')} m, subscriptions s
      where s.app_user_id = m.ps and w.subscription_id = s.id and w.payload::text like '%' || to_jsonb(m.id)::text || '%'`,
    [ids, pseudonyms],
  );
  // The SDK's per-user rate limit is keyed by the id (api/sdk/limits.ts): a new customer's starts full.
  await trx.raw(
    `delete from client_rate_limit_buckets where bucket in (select 'user:' || x from unnest(?::text[]) x)`,
    [ids],
  );
}

/** The id's SHA-256 (hex): what erased event bodies carry, and how an erasure is found again. */
export const idSha256 = (id: string) => crypto.createHash('sha256').update(id, 'utf8').digest('hex');

/** A pseudonym: random, so it says nothing of the id; the same in every table that held it. */
const pseudonym = () => `erased_${crypto.randomBytes(16).toString('hex')}`;

/**
 * Erases the app user's personal data and records it: answers the erasure's record, and whether
 * this call made it. An id with no records left but an erasure answers that (latest) erasure, with
 * `erased` false; an id without either is `undefined`. Records written under the id after an
 * erasure are a new customer's, erased by a new erasure. A per-customer advisory lock serialises
 * two requests for one app user, so the second answers the first's record.
 */
export async function eraseCustomer(
  trx: Knex.Transaction,
  tenantId: string,
  appUserId: string,
  erasedBy: string,
  exists: (id: string) => Promise<boolean>,
): Promise<{ row: Row; erased: boolean } | undefined> {
  const hash = idSha256(appUserId);
  await trx.raw(`select pg_advisory_xact_lock(hashtextextended('customer-erase:' || ? || ':' || ?, 0))`, [
    tenantId,
    hash,
  ]);
  if (!(await exists(appUserId))) {
    const before = await erasureOf(trx, appUserId);
    return before ? { row: before, erased: false } : undefined;
  }
  const { rows: aliasRows } = await trx.raw(
    `select alias_id from app_user_aliases where app_user_id = ? order by created_at, alias_id`,
    [appUserId],
  );
  const ids = [
    appUserId,
    ...aliasRows.map((r: { alias_id: string }) => r.alias_id).filter((a: string) => a !== appUserId),
  ];
  const pseudonyms = ids.map(pseudonym);
  const [removed] = (await readerOf(trx).rows(ERASE, [ids])) as unknown as ErasureCounts[];
  await renameIds(trx, ids, pseudonyms);
  const { rows: chains } = await trx.raw(`select ${chainKey('x')} as chain from unnest(?::text[]) x`, [ids]);
  const none: ErasureCounts = { attributes: 0, aliases: 0, notes: 0, emails: 0, event_bodies: 0 };
  const inserted = await trx('customer_erasures')
    .insert(
      ids.map((id, i) => ({
        tenant_id: tenantId,
        erased_as: pseudonyms[i],
        app_user_id_sha256: idSha256(id),
        chain: chains[i].chain,
        removed: i === 0 ? removed : none,
        erased_by: erasedBy,
      })),
    )
    .returning(COLUMNS);
  await purgeExports(trx);
  return { row: inserted[0], erased: true };
}

/**
 * The files of the tenant's exports made before this erasure hold the id (the `customers` file is
 * every chain's head): their parts are deleted and the export marked, and a download answers 410.
 * One still running is marked too: storeExportFile then keeps no part of it (it takes the same row lock).
 */
async function purgeExports(trx: Knex.Transaction): Promise<void> {
  await trx.raw(
    `with purged as (update exports set purged_at = now() where purged_at is null returning id)
     delete from export_file_parts where export_id in (select id from purged)`,
  );
}

const COLUMNS = ['erased_as', 'removed', 'erased_by', 'erased_at'];

/** The id's latest erasure, if there was one (found by the id's SHA-256: the id is not kept). */
export async function erasureOf(src: PageSource, appUserId: string): Promise<Row | undefined> {
  const [row] = await readerOf(src).rows(
    `select erased_as, removed, erased_by, erased_at from customer_erasures where app_user_id_sha256 = $1
      order by erased_at desc, erased_as limit 1`,
    [idSha256(appUserId)],
    { types: isoTimestampTypes },
  );
  return row;
}

/**
 * The erasures made in `[since, until)` (null: unbounded), for an export's `erasures` file: each
 * erased id's pseudonym, its SHA-256, the chain it had and the chain its events have since (the
 * pseudonym's), so a warehouse holding earlier exports can apply them.
 */
export const ERASURES_EXPORT_SQL = `select erased_as, app_user_id_sha256, chain,
        'sub-' || left(encode(sha256(convert_to(tenant_id::text || ':' || erased_as, 'UTF8')), 'hex'), 32) as erased_chain,
        to_char(erased_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as erased_at
      from customer_erasures where ($1::timestamptz is null or erased_at >= $1::timestamptz)
        and ($2::timestamptz is null or erased_at < $2::timestamptz) order by erased_at, erased_as`;
