import type { Knex } from 'knex';

/**
 * Play supersession (domain/store-purchase.ts `storeWritePlan`): an upgrade, a downgrade or a
 * resubscribe is a new purchase naming the one it replaces (`linkedPurchaseToken`). The replaced
 * purchase's record keeps what Play says about it, but names its successor so a later re-read
 * of it never writes an entitlement again (one entitlement per user, never two).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table subscriptions add column if not exists superseded_by text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table subscriptions drop column if exists superseded_by');
}
