import type { Knex } from 'knex';

/**
 * The status and product histories (migrations 019 and 037) are dated at the provider's time of
 * the move, not at the moment the service wrote it: a webhook retried for an hour, an import, or a
 * backfilled history would otherwise all pile up on the day they were written (docs/charts.md).
 *
 * - `subscriptions.status_since`: since when the record's status holds, as the provider says it:
 *   the deciding event's time (web lifecycle), or the time of the store's answer (store paths,
 *   which read a state, not an event); null: not said.
 * - Both history triggers date a new row at `status_since`, bounded: never later than now (a
 *   provider's clock ahead of ours), and always after the record's previous row, by a
 *   microsecond at least (a late event never reorders what was recorded, and two moves never
 *   tie: readers order a record's rows by time); now() when the write said no time.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table subscriptions add column status_since timestamptz');
  await knex.raw(`create or replace function record_subscription_change() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' or new.status is distinct from old.status then
        insert into subscription_changes (tenant_id, subscription_id, provider, mode, from_status, to_status, changed_at)
        values (new.tenant_id, new.id, new.provider, new.mode, case when tg_op = 'UPDATE' then old.status end, new.status,
          greatest(least(coalesce(new.status_since, now()), now()),
            (select max(changed_at) from subscription_changes where subscription_id = new.id) + interval '1 microsecond'));
      end if;
      return null;
    end $$`);
  await knex.raw(`create or replace function record_subscription_product() returns trigger language plpgsql as $$
    begin
      insert into subscription_product_changes (tenant_id, subscription_id, product_id, changed_at)
      values (new.tenant_id, new.id, new.product_id,
        greatest(least(coalesce(new.status_since, now()), now()),
          (select max(changed_at) from subscription_product_changes where tenant_id = new.tenant_id and subscription_id = new.id)
            + interval '1 microsecond'));
      return null;
    end $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`create or replace function record_subscription_product() returns trigger language plpgsql as $$
    begin
      insert into subscription_product_changes (tenant_id, subscription_id, product_id)
      values (new.tenant_id, new.id, new.product_id);
      return null;
    end $$`);
  await knex.raw(`create or replace function record_subscription_change() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' or new.status is distinct from old.status then
        insert into subscription_changes (tenant_id, subscription_id, provider, mode, from_status, to_status)
        values (new.tenant_id, new.id, new.provider, new.mode, case when tg_op = 'UPDATE' then old.status end, new.status);
      end if;
      return null;
    end $$`);
  await knex.raw('alter table subscriptions drop column if exists status_since');
}
