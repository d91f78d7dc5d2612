import type { Knex } from 'knex';

/** One lag over the last hour: how many were measured and their 95th percentile, in seconds (null when none). */
export interface Lag {
  n: number;
  p95: number | null;
}

export interface LatencyFigures {
  /** Receipt → provisional premium, over the receipts of the last hour that granted it. */
  premium: Lag;
  /** Receipt → the authoritative write, over the last hour's receipts applied to a subscription. */
  authoritative: Lag;
  /** Outbound event created → delivered (2xx), over the deliveries made in the last hour. */
  outbound: Lag;
}

/**
 * The overview's health section: the tenant's own lags of the last hour, from stored times
 * (docs/operations.md, "Objectives": the metrics have no tenant label, so a tenant's figures come
 * from here). A delivery's receipt is its row's `created_at`; premium at receipt is its
 * `premium_at`; the authoritative write is its `processed_at`, set in the
 * transaction that writes the entitlement; an outbound delivery's time is its `delivered_at`. In
 * the caller's tenant transaction (row-level security scopes it; the (tenant_id, created_at)
 * and (tenant_id, delivered_at) indexes bound it to an hour of rows). A read: it writes nothing.
 */
export async function latencyFigures(trx: Knex.Transaction): Promise<LatencyFigures> {
  const { rows } = await trx.raw(
    `with w as (select premium_at, processed_at, created_at, subscription_id from webhook_deliveries
                 where created_at > now() - interval '1 hour'),
          o as (select extract(epoch from d.delivered_at - e.created_at) as s
                  from outbound_deliveries d join outbound_events e on e.id = d.event_id
                 where d.status = 'succeeded' and d.delivered_at > now() - interval '1 hour')
     select (select count(*) from w where premium_at is not null)::int as premium_n,
            (select percentile_cont(0.95) within group (order by extract(epoch from premium_at - created_at))
               from w where premium_at is not null)::float8 as premium_p95,
            (select count(*) from w where subscription_id is not null and processed_at is not null)::int as authoritative_n,
            (select percentile_cont(0.95) within group (order by extract(epoch from processed_at - created_at))
               from w where subscription_id is not null and processed_at is not null)::float8 as authoritative_p95,
            (select count(*) from o)::int as outbound_n,
            (select percentile_cont(0.95) within group (order by s) from o)::float8 as outbound_p95`,
  );
  const r = rows[0];
  return {
    premium: { n: r.premium_n, p95: r.premium_p95 },
    authoritative: { n: r.authoritative_n, p95: r.authoritative_p95 },
    outbound: { n: r.outbound_n, p95: r.outbound_p95 },
  };
}
