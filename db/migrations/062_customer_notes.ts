import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * `customer_notes`: what the support desk wrote about an app user (docs/support.md, "Notes"),
 * newest first on the customer page. Who wrote it is an actor reference (a key id or
 * `user:<id>`), never a name or address; the text is the writer's and shown as written.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('customer_notes', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('app_user_id').notNullable();
    t.text('body').notNullable();
    t.text('written_by').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'app_user_id', 'created_at']);
  });
  await tenantTablePolicies(knex, 'customer_notes');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('customer_notes');
}
