import type { Knex } from 'knex';

/**
 * The event pipeline, tenant-scoped (docs/temporal.md, "Identity rules").
 *
 * - A provider event id is unique per tenant, not per provider: tenants send us whatever ids
 *   they like under their own signatures, so a global key let one tenant's event shadow
 *   another's. Old rows keep their ids; the key only gains the tenant.
 * - `webhook_deliveries.buyer_email`: the buyer's address as the event named it. Kept here,
 *   under the tenant's row-level policy, so the workflow that applies the event carries only
 *   the fact that there was one; no API serialises this column.
 * - The outbox counts hand-over attempts and backs off per row: a row Temporal refuses waits
 *   its turn instead of holding back the rows behind it, and after a bounded number of
 *   attempts its delivery is `failed` with the reason. Each api process drains the rows of its
 *   own task queue (`task_queue`). Rows queued before this migration are
 *   rewritten to the new hand-over shape (tenant in every grouping key, no email).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropUnique(['provider', 'event_id']);
    t.unique(['tenant_id', 'provider', 'event_id']);
    t.text('buyer_email');
  });
  await knex.schema.alterTable('webhook_outbox', (t) => {
    t.text('task_queue');
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('last_error');
  });
  await knex.raw(`update webhook_outbox set task_queue = handover->>'taskQueue'`);
  await knex.raw('alter table webhook_outbox alter column task_queue set not null');
  await knex.schema.alterTable('webhook_outbox', (t) => {
    t.index(['task_queue', 'next_attempt_at', 'id']);
  });
  // Refusals are rate-limited per provider and minute (db/webhook-deliveries.ts): that count reads this.
  await knex.raw(
    `create index webhook_deliveries_refusals on webhook_deliveries (provider, created_at) where event_type = 'unverified'`,
  );
  await knex.raw(`
    update webhook_deliveries d set buyer_email = o.handover->'event'->>'email'
      from webhook_outbox o
     where o.delivery_id = d.id and (o.handover->>'kind') is null and o.handover->'event'->>'email' is not null`);
  await knex.raw(`
    update webhook_outbox set handover = jsonb_build_object(
        'kind', 'lifecycle',
        'tenantId', handover->'input'->>'tenantId',
        'provider', handover->'input'->>'provider',
        'customerKey', handover->'input'->>'customerKey',
        'event', ((handover->'event') - 'email'::text) || jsonb_build_object('has_email', coalesce(handover->'event'->>'email', '') <> ''))
     where (handover->>'kind') is null`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists webhook_deliveries_refusals');
  await knex.schema.alterTable('webhook_outbox', (t) => {
    t.dropIndex(['task_queue', 'next_attempt_at', 'id']);
    t.dropColumn('task_queue');
    t.dropColumn('last_error');
    t.dropColumn('next_attempt_at');
    t.dropColumn('attempts');
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('buyer_email');
    t.dropUnique(['tenant_id', 'provider', 'event_id']);
    t.unique(['provider', 'event_id']);
  });
}
