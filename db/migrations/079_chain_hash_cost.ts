import type { Knex } from 'knex';

/**
 * What hashing a customer event costs (docs/event-proofs.md, "What the chain costs"): the same
 * results, for less work in the write that records the event.
 *
 * - `jcs(jsonb)` (060's): a member or element that is a string, a boolean or null is written in
 *   place, an integer of up to 15 digits too (its text is already ECMAScript's); only objects,
 *   arrays and other numbers call the function again. 060's called it once per value, and PL/pgSQL
 *   calls are most of its cost: an entitlement event's body (about 40 values) took one call for
 *   each.
 *
 * `event_proof_form` is left as 076 made it: every body recorded since is marked `"proof": 2`, whose
 * ids are hashed whether or not it holds an email, so there is no body to answer without its pass.
 *
 * Down restores `jcs` as 060 wrote it.
 */

/** One member or element `x` of an object or array, canonical, calling `jcs` only for containers and non-integers. */
const member = (x: string) => `case jsonb_typeof(${x})
                     when 'string' then to_json(${x} #>> '{}')::text
                     when 'number' then case when (${x} #>> '{}') ~ '^-?[0-9]{1,15}$' then ${x} #>> '{}'
                                             else jcs_number((${x} #>> '{}')::numeric) end
                     when 'boolean' then ${x}::text
                     when 'null' then 'null'
                     else jcs(${x}) end`;

const JCS_NOW = `
create or replace function public.jcs(v jsonb) returns text
    language plpgsql immutable strict
    set search_path to 'public', 'pg_temp'
    as $$
    declare r text;
    begin
      case jsonb_typeof(v)
        when 'object' then
          select '{' || coalesce(string_agg(to_json(key)::text || ':' || ${member('value')}, ',' order by key collate "C"), '') || '}'
            into r from jsonb_each(v);
          return r;
        when 'array' then
          select '[' || coalesce(string_agg(${member('value')}, ',' order by ord), '') || ']'
            into r from jsonb_array_elements(v) with ordinality as a(value, ord);
          return r;
        when 'string' then return to_json(v #>> '{}')::text;
        when 'number' then return jcs_number((v #>> '{}')::numeric);
        else return v::text;
      end case;
    end $$;`;

const JCS_BEFORE = `
create or replace function public.jcs(v jsonb) returns text
    language plpgsql immutable strict
    set search_path to 'public', 'pg_temp'
    as $$
    declare r text;
    begin
      case jsonb_typeof(v)
        when 'object' then
          select '{' || coalesce(string_agg(to_json(key)::text || ':' || jcs(value), ',' order by key collate "C"), '') || '}'
            into r from jsonb_each(v);
          return r;
        when 'array' then
          select '[' || coalesce(string_agg(jcs(value), ',' order by ord), '') || ']'
            into r from jsonb_array_elements(v) with ordinality as a(value, ord);
          return r;
        when 'string' then return to_json(v #>> '{}')::text;
        when 'number' then return jcs_number((v #>> '{}')::numeric);
        else return v::text;
      end case;
    end $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(JCS_NOW);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(JCS_BEFORE);
}
