import type { Knex } from 'knex';

/**
 * The webhook outbox: one row per stored delivery whose processing has not yet been handed to
 * Temporal, written in the same statement as the delivery row. The receiver answers 200 once
 * both are committed; a dispatcher signals the customer's workflow and deletes the row. Not a
 * tenant table (the tenant is inside `handover`, with the event the workflow needs, including
 * the buyer's email and app user id, which the redacted delivery payload does not keep): no API
 * reads it, and a row lives only until its hand-over.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_outbox', (t) => {
    t.bigIncrements('id');
    t.uuid('delivery_id').notNullable().unique().references('webhook_deliveries.id').onDelete('CASCADE');
    t.jsonb('handover').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_outbox');
}
