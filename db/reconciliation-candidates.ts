import type { Knex } from 'knex';
import { CANDIDATE_WINDOWS } from '../domain/reconciliation-schedule';

/**
 * The subscription a webhook delivery was about, read from the provider's own payload (stored
 * redacted of personal data, ids kept): Stripe's subscription object or the `subscription` an
 * invoice names, Paddle's subscription or the `subscription_id` a transaction names, Razorpay's
 * subscription entity. A delivery that failed before it was applied has no `subscription_id`
 * link yet; this is how a run still finds the subscription it was about.
 */
const PAYLOAD_SUBSCRIPTION = `case d.provider
  when 'psp_a' then coalesce(
    d.payload #>> '{data,object,subscription}',
    d.payload #>> '{data,object,parent,subscription_details,subscription}',
    case when d.payload #>> '{data,object,object}' = 'subscription' then d.payload #>> '{data,object,id}' end)
  when 'psp_b' then coalesce(
    d.payload #>> '{data,subscription_id}',
    case when d.event_type like 'subscription.%' then d.payload #>> '{data,id}' end)
  when 'psp_c' then d.payload #>> '{payload,subscription,entity,id}'
end`;

/**
 * One page of a run's candidate customers, in the caller's tenant transaction (RLS: only the
 * tenant's rows exist here): the app users holding a subscription of `providers` that could have
 * changed (domain/reconciliation-schedule.ts, CANDIDATE_WINDOWS), judged at `asOf`, the run's
 * start, so every page of a run sees the same windows. Keyset paging on the smallest
 * subscription id of each customer (`after`), so the cursor a workflow carries is an id, not the
 * app user. Subscriptions without an app user are no customer a per-customer comparison can name.
 */
export async function candidateCustomerPage(
  trx: Knex.Transaction,
  q: { providers: readonly string[]; asOf: string; after: string | null; limit: number },
): Promise<{ appUserIds: string[]; next: string | null }> {
  const w = CANDIDATE_WINDOWS;
  const { rows } = await trx.raw(
    `with asof as (select ?::timestamptz as t),
     c as (
       select s.app_user_id, s.id from subscriptions s, asof
        where s.provider = any(?::text[]) and s.app_user_id is not null
          and (s.updated_at >= asof.t - make_interval(days => ?)
               or s.status = 'past_due'
               or (s.status not in ('expired', 'refunded')
                   and s.current_period_end between asof.t - make_interval(hours => ?) and asof.t + make_interval(hours => ?)))
       union all
       select s.app_user_id, s.id from webhook_deliveries d, asof, subscriptions s
        where d.status = 'failed' and d.provider = any(?::text[]) and d.created_at >= asof.t - make_interval(days => ?)
          and s.id = d.subscription_id and s.app_user_id is not null
       union all
       select s.app_user_id, s.id from webhook_deliveries d, asof, subscriptions s
        where d.status = 'failed' and d.provider = any(?::text[]) and d.created_at >= asof.t - make_interval(days => ?)
          and d.subscription_id is null
          and s.provider = d.provider and s.external_id = (${PAYLOAD_SUBSCRIPTION}) and s.app_user_id is not null
     )
     select app_user_id, min(id::text) as k from c
      group by app_user_id
     having (?::text is null or min(id::text) > ?::text)
      order by k limit ?`,
    [
      q.asOf,
      q.providers,
      w.recentDays,
      w.renewalPastHours,
      w.renewalAheadHours,
      q.providers,
      w.recentDays,
      q.providers,
      w.recentDays,
      q.after,
      q.after,
      q.limit,
    ] as Knex.RawBinding[],
  );
  const list = rows as { app_user_id: string; k: string }[];
  return {
    appUserIds: list.map((r) => r.app_user_id),
    next: list.length === q.limit ? list[list.length - 1].k : null,
  };
}
