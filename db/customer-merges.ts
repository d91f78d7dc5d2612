import type { Knex } from 'knex';
import { readerOf, type PageSource } from './paging';

/**
 * A merge announced (docs/transfers.md, "Aliases are not transfers"): `customer.merged` about the
 * customer `into`, on its chain, and the end of `from`'s own chain (record_customer_merge,
 * migration 075). In the transaction that made `from` an id of `into`, so an alias that rolls back
 * announces nothing, and one made again (already there) is not announced twice: callers call it
 * only when the alias row is new.
 */
export async function recordCustomerMerge(
  trx: Knex.Transaction,
  tenantId: string,
  from: string,
  into: string,
): Promise<void> {
  await trx.raw('select record_customer_merge(?, ?, ?)', [tenantId, from, into]);
}

/**
 * Where a merged id's events continue (docs/event-proofs.md, "Following a merged id"): the chain it
 * was merged into and the `sequence` of the `customer.merged` event there that ended its own, while
 * it is still an id of another customer. A merge from before merge events has no such event
 * (`sequence` null): the id it names now. Null for an id merged into nobody. Run inside a tenant read.
 */
export async function mergedInto(
  src: PageSource,
  appUserId: string,
): Promise<{ app_user_id: string; sequence: number | null } | null> {
  const [r] = await readerOf(src).rows(
    `select coalesce(s.merged_into, a.app_user_id) as app_user_id, s.merged_sequence as sequence
       from app_user_aliases a
       left join customer_event_sequences s on s.tenant_id = a.tenant_id and s.subject = a.alias_id
      where a.alias_id = $1`,
    [appUserId],
  );
  if (!r) return null;
  return { app_user_id: r.app_user_id as string, sequence: r.sequence === null ? null : Number(r.sequence) };
}
