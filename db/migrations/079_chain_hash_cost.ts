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
 * - `event_proof_form(jsonb)` (069's): a body whose text holds no `@` holds no email, so it is its
 *   own proof form, answered without the pass over its fields that tests each against the pattern.
 *
 * Down restores both as 060 and 069 wrote them.
 */
const EMAIL = String.raw`[^ \t\n\r\f\v@]+@[^ \t\n\r\f\v@]+\.[^ \t\n\r\f\v@]+`;

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

const PROOF_FORM_FIELDS = `coalesce((
        select jsonb_object_agg(
                 case when jsonb_typeof(value) = 'string' and (value #>> '{}') ~ '${EMAIL}' then key || '_sha256' else key end,
                 case when jsonb_typeof(value) = 'string' and (value #>> '{}') ~ '${EMAIL}'
                      then to_jsonb(encode(sha256(convert_to(value #>> '{}', 'UTF8')), 'hex')) else value end)
          from jsonb_each(v)), '{}'::jsonb)`;

const proofForm = (fastPath: boolean) => `
create or replace function public.event_proof_form(v jsonb) returns jsonb
    language sql immutable strict
    set search_path to 'public', 'pg_temp'
    as $$
      select case when jsonb_typeof(v) <> 'object' then v${
        fastPath ? `\n                  when strpos(v::text, '@') = 0 then v` : ''
      } else ${PROOF_FORM_FIELDS} end
    $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(JCS_NOW);
  await knex.raw(proofForm(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(proofForm(false));
  await knex.raw(JCS_BEFORE);
}
