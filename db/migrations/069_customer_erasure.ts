import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Erasing a customer's personal data (docs/event-proofs.md, "Erasure"; docs/support.md, "Erasure").
 *
 * - `event_proof_form(jsonb)`: an event's `data` as its hash covers it. Each top-level text field
 *   that holds an email (the one personal value a chained body can carry: a purchase made without
 *   an app user is held under the buyer's email) is replaced by the hex SHA-256 of its value under
 *   `<name>_sha256`; everything else is as it is. Erasure writes that form into the stored body, so
 *   the event's `hash`, every later link and the signed digests stay what they were.
 * - `record_outbound_event` hashes `jcs(event_proof_form(data))` instead of `jcs(data)`: the same
 *   hash for every body without an email, which is every body the service wrote so far but those
 *   of such purchases. The function is otherwise the one in force, so only that expression is
 *   changed in its current definition (and back on the way down).
 * - `customer_erasures`: one row per erased app user (when, what was removed, as counts), so a
 *   second request answers the first erasure and the support desk sees that it happened.
 */

const EMAIL = String.raw`[^ \t\n\r\f\v@]+@[^ \t\n\r\f\v@]+\.[^ \t\n\r\f\v@]+`;

const PROOF_FORM = `
create function public.event_proof_form(v jsonb) returns jsonb
    language sql immutable strict
    set search_path to 'public', 'pg_temp'
    as $$
      select case when jsonb_typeof(v) <> 'object' then v else coalesce((
        select jsonb_object_agg(
                 case when jsonb_typeof(value) = 'string' and (value #>> '{}') ~ '${EMAIL}' then key || '_sha256' else key end,
                 case when jsonb_typeof(value) = 'string' and (value #>> '{}') ~ '${EMAIL}'
                      then to_jsonb(encode(sha256(convert_to(value #>> '{}', 'UTF8')), 'hex')) else value end)
          from jsonb_each(v)), '{}'::jsonb) end
    $$;
grant execute on function public.event_proof_form(jsonb) to billing_app;`;

const HASHED_BEFORE = `sha256(convert_to(jcs(v_data), 'UTF8'))`;
const HASHED_NOW = `sha256(convert_to(jcs(event_proof_form(v_data)), 'UTF8'))`;

/** Replaces one expression in `record_outbound_event` as defined now; refuses unless it is there exactly once. */
async function rehash(knex: Knex, from: string, to: string): Promise<void> {
  const { rows } = await knex.raw(`select pg_get_functiondef('public.record_outbound_event'::regproc) as def`);
  const def: string = rows[0].def;
  if (def.split(from).length !== 2) throw new Error('069: record_outbound_event does not hash as expected');
  await knex.raw(def.replace(from, to));
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(PROOF_FORM);
  await rehash(knex, HASHED_BEFORE, HASHED_NOW);
  await knex.schema.createTable('customer_erasures', (t) => {
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('app_user_id').notNullable();
    t.jsonb('removed').notNullable();
    t.text('erased_by').notNullable();
    t.timestamp('erased_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'app_user_id']);
  });
  await tenantTablePolicies(knex, 'customer_erasures');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('customer_erasures');
  await rehash(knex, HASHED_NOW, HASHED_BEFORE);
  await knex.raw('drop function event_proof_form(jsonb)');
}
