import type Koa from 'koa';
import { Counter, Gauge } from 'prom-client';
import type { Knex } from 'knex';
import { outboxStats } from '../db/outbox-stats';
import { expireProvisional } from '../db/provisional';
import { httpDuration, httpRequests, registry, secondsSince } from '../runtime/metrics';
import { toApiError } from '../operations/errors';

/**
 * The route family of a request: a bounded label (paths carry ids, and a label per id would be
 * a time series per customer). Management operations have their own metric by operation name
 * (operations/execute.ts).
 */
function routeFamily(listener: string, path: string): string {
  if (listener === 'tools') return 'tools';
  if (path === '/healthz' || path === '/readyz') return 'health';
  if (path.startsWith('/api/webhooks/')) return 'webhook';
  if (path.startsWith('/v1/sdk/')) return 'sdk';
  if (path === '/v1' || path.startsWith('/v1/')) return 'v1';
  return listener === 'dashboard' ? 'dashboard' : 'other';
}

/** Count and time every request of a listener (outermost, so refusals and errors are counted with their status). */
export function httpMetrics(listener: 'api' | 'dashboard' | 'tools'): Koa.Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const route = routeFamily(listener, ctx.path);
      httpRequests.inc({ listener, route, status: String(ctx.status) });
      httpDuration.observe({ listener, route }, secondsSince(started));
    }
  };
}

/** What a refused or failed webhook receipt counts as. */
export function receiptOutcome(err: unknown): string {
  const e = toApiError(err); // the answer the provider gets (a database outage is its 503)
  if (e.code === 'invalid_event') return 'invalid_event';
  if (e.status === 503) return 'unavailable';
  return e.status < 500 ? 'refused' : 'error';
}

/**
 * The outbox's depth and the age of its oldest row, read at each scrape. Every api process
 * reports the same shared table: aggregate with max(), not sum(). A scrape while Postgres is
 * away leaves the gauges out rather than reporting a false zero.
 */
export function registerOutboxGauges(db: Knex, taskQueue: string): void {
  let pending: Promise<{ depth: number; oldestAgeSeconds: number } | null> | null = null;
  // Both gauges are collected in one scrape: one query serves them.
  const read = () =>
    (pending ??= outboxStats(db, taskQueue)
      .catch(() => null)
      .finally(() => setTimeout(() => (pending = null), 0)));
  new Gauge({
    name: 'billing_webhook_outbox_depth',
    help: 'Webhook outbox rows of this task queue not yet handed to Temporal, counted up to 10000 (shared by all api processes: use max()).',
    registers: [registry],
    async collect() {
      const s = await read();
      if (s) this.set(s.depth);
      else this.reset();
    },
  });
  new Gauge({
    name: 'billing_webhook_outbox_oldest_age_seconds',
    help: 'Age of the oldest webhook outbox row, 0 when empty (shared by all api processes: use max()).',
    registers: [registry],
    async collect() {
      const s = await read();
      if (s) this.set(s.oldestAgeSeconds);
      else this.reset();
    },
  });
}

let provisionalDb: Knex | null = null;

/**
 * Provisional access that ran out before the workflow confirmed it (docs/provisional-access.md).
 * Each scrape first marks the grants past their expiry `unconfirmed`, once each across every api
 * process (the marking is one statement with SKIP LOCKED): aggregate with sum(). No tenant label;
 * the tenant sees its own in the customer view.
 */
const provisionalUnconfirmed = new Counter({
  name: 'billing_provisional_unconfirmed_total',
  help: 'Provisional access grants that expired without the workflow confirming them, by provider.',
  labelNames: ['provider'] as const,
  registers: [registry],
  async collect() {
    if (provisionalDb) await countUnconfirmedProvisional(provisionalDb).catch(() => undefined);
  },
});

/** Mark and count the provisional grants now past their expiry (what a scrape runs). */
export async function countUnconfirmedProvisional(db: Knex): Promise<number> {
  let total = 0;
  for (const { provider, n } of await expireProvisional(db)) {
    provisionalUnconfirmed.inc({ provider }, n);
    total += n;
  }
  return total;
}

/** The api process's scrapes mark and count expired provisional access (api/main.ts). */
export function registerProvisionalExpiry(db: Knex): void {
  provisionalDb = db;
}
