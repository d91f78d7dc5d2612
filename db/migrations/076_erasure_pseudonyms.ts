import type { Knex } from 'knex';

/**
 * Erasure takes the app user id itself (docs/event-proofs.md, "Erasure"; docs/support.md, "Erasure").
 *
 * - `event_proof_form(jsonb)`: for a body marked `"proof": 2`, the app user's ids are personal values
 *   too: `app_user_id` becomes `app_user_id_sha256`, a merge event's `merged_app_user_id`
 *   `merged_app_user_id_sha256` and `known_as` becomes `known_as_sha256` (each id as its hex
 *   SHA-256), besides 069's emails. Bodies without the mark keep 069's rule, so every hash
 *   recorded so far still checks.
 * - `record_outbound_event` marks every chained event `"proof": 2` before hashing it, so an erasure
 *   can replace the ids of every event recorded from now on and its hash still checks. Only that line
 *   of the function in force (074's) is changed, as 069 did.
 * - `customer_erasures` no longer holds the id: an erased customer's rows are kept under a pseudonym
 *   (`erased_as`, random, the same in every table), found again by the SHA-256 of the id (what the
 *   erased event bodies carry), with the chain it ended (`chain`, for a warehouse holding the events
 *   exported before). A row written before this (the id kept in clear) keeps only its hash: that
 *   customer's rows were not renamed, so erasing them again completes it.
 * - `exports.purged_at`: when an erasure deleted the files of an export finished before it.
 */

const MARK_FROM = `v_data := v_data || jsonb_build_object('hash', encode(sha256(convert_to(jcs(event_proof_form(v_data))`;
const MARK_TO = `v_data := v_data || jsonb_build_object('proof', 2);
        ${MARK_FROM}`;

const EMAIL = String.raw`[^ \t\n\r\f\v@]+@[^ \t\n\r\f\v@]+\.[^ \t\n\r\f\v@]+`;
const SHA = (text: string) => `encode(sha256(convert_to(${text}, 'UTF8')), 'hex')`;

const proofForm = (ids: boolean) => `
create or replace function public.event_proof_form(v jsonb) returns jsonb
    language sql immutable strict
    set search_path to 'public', 'pg_temp'
    as $$
      select case when jsonb_typeof(v) <> 'object' then v else coalesce((
        select jsonb_object_agg(
                 case ${
                   ids
                     ? `when (v->>'proof') = '2' and key in ('app_user_id', 'merged_app_user_id') and jsonb_typeof(value) = 'string' then key || '_sha256'
                      when (v->>'proof') = '2' and key = 'known_as' and jsonb_typeof(value) = 'array' then 'known_as_sha256'`
                     : ''
                 }
                      when jsonb_typeof(value) = 'string' and (value #>> '{}') ~ '${EMAIL}' then key || '_sha256' else key end,
                 case ${
                   ids
                     ? `when (v->>'proof') = '2' and key in ('app_user_id', 'merged_app_user_id') and jsonb_typeof(value) = 'string' then to_jsonb(${SHA(`value #>> '{}'`)})
                      when (v->>'proof') = '2' and key = 'known_as' and jsonb_typeof(value) = 'array'
                      then coalesce((select jsonb_agg(${SHA(`x #>> '{}'`)} order by n) from jsonb_array_elements(value) with ordinality a(x, n)), '[]'::jsonb)`
                     : ''
                 }
                      when jsonb_typeof(value) = 'string' and (value #>> '{}') ~ '${EMAIL}'
                      then to_jsonb(${SHA(`value #>> '{}'`)}) else value end)
          from jsonb_each(v)), '{}'::jsonb) end
    $$;`;

/** Replaces one expression in `record_outbound_event` as defined now; refuses unless it is there exactly once. */
async function replaceInRecord(knex: Knex, from: string, to: string): Promise<void> {
  const { rows } = await knex.raw(`select pg_get_functiondef('public.record_outbound_event'::regproc) as def`);
  const def: string = rows[0].def;
  if (def.split(from).length !== 2) throw new Error('076: record_outbound_event does not hash as expected');
  await knex.raw(def.replace(from, to));
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(proofForm(true));
  await replaceInRecord(knex, MARK_FROM, MARK_TO);
  await knex.raw(`alter table customer_erasures add column erased_as text, add column app_user_id_sha256 text,
    add column chain text`);
  await knex.raw(`update customer_erasures set app_user_id_sha256 = ${SHA('app_user_id')},
    erased_as = 'erased_' || replace(gen_random_uuid()::text, '-', '')`);
  await knex.raw(`alter table customer_erasures drop constraint customer_erasures_pkey, drop column app_user_id,
    alter column erased_as set not null, alter column app_user_id_sha256 set not null,
    add primary key (tenant_id, erased_as)`);
  await knex.raw(
    `create index customer_erasures_by_id on customer_erasures (tenant_id, app_user_id_sha256, erased_at)`,
  );
  await knex.raw(`alter table exports add column purged_at timestamptz`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table exports drop column purged_at`);
  // The ids are gone: the rows of erasures are kept under their pseudonym.
  await knex.raw(`drop index customer_erasures_by_id`);
  await knex.raw(`alter table customer_erasures drop constraint customer_erasures_pkey`);
  await knex.raw(`alter table customer_erasures rename column erased_as to app_user_id`);
  await knex.raw(`alter table customer_erasures drop column app_user_id_sha256, drop column chain,
    add primary key (tenant_id, app_user_id)`);
  await replaceInRecord(knex, MARK_TO, MARK_FROM);
  await knex.raw(proofForm(false));
}
