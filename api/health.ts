import type Koa from 'koa';
import { OUTBOX_DEPTH_COUNTED, outboxStats } from '../db/outbox-stats';
import { pingDatabase } from '../db/ping';
import { within } from '../runtime/deadline';
import type { Services } from '../operations/services';

/** What the three checks found: `ok`, or what is wrong in words meant for the operator. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
}

/**
 * How long one round of checks answers every /readyz (public and metrics listeners alike). A
 * flood of /readyz then costs one round per second, not three backend calls per request.
 */
export const READINESS_CACHE_MS = 1_000;

const cached = new WeakMap<Services, () => Promise<Readiness>>();

/**
 * Readiness: Postgres and Temporal answer, and the webhook outbox is draining (its oldest row
 * is younger than OUTBOX_MAX_AGE_SECONDS). One round of checks at a time per process (callers
 * meanwhile share it), and its answer is reused for READINESS_CACHE_MS after it ends.
 */
export function readinessOf(services: Services): () => Promise<Readiness> {
  let probe = cached.get(services);
  if (!probe) {
    let last: { at: number; value: Readiness } | undefined;
    let pending: Promise<Readiness> | undefined;
    probe = () => {
      if (last && Date.now() - last.at < READINESS_CACHE_MS) return Promise.resolve(last.value);
      pending ??= runChecks(services)
        .then((value) => {
          last = { at: Date.now(), value };
          return value;
        })
        .finally(() => (pending = undefined));
      return pending;
    };
    cached.set(services, probe);
  }
  return probe;
}

async function runChecks(services: Services): Promise<Readiness> {
  const checks: Record<string, string> = {};
  await Promise.all([
    within(2000, pingDatabase(services.db)).then(
      () => (checks.postgres = 'ok'),
      (e) => (checks.postgres = `unreachable: ${e.message}`),
    ),
    services.temporal
      ? within(2000, services.temporal.connection.healthService.check({})).then(
          () => (checks.temporal = 'ok'),
          (e) => (checks.temporal = `unreachable: ${String(e.message).split('\n')[0]}`),
        )
      : Promise.resolve((checks.temporal = 'unreachable: not connected')),
    outboxCheck(services).then((v) => v && (checks.outbox = v)),
  ]);
  return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
}

const statusWord = (r: Readiness) => (r.ready ? 'ready' : 'unavailable');

/**
 * `/healthz`: the process is up. `/readyz`: ready (200) or not (503), and nothing else: these
 * listeners are public, and what a check found (addresses, driver errors, outbox depth) is for
 * the operator, who reads it on the loopback metrics listener (readinessDetail below).
 * The outbox is shared, so a stuck one turns every api process unready at once (docs/operations.md).
 */
export function healthRoutes(services: Services): Koa.Middleware {
  const readiness = readinessOf(services);
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || (ctx.path !== '/healthz' && ctx.path !== '/readyz')) return next();
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    const r = await readiness();
    ctx.status = r.ready ? 200 : 503;
    ctx.body = { status: statusWord(r) };
  };
}

/** `GET /readyz` of the metrics listener (127.0.0.1, METRICS_PORT): the same answer, naming each check. */
export function readinessDetail(services: Services): () => Promise<{ status: number; body: unknown }> {
  const readiness = readinessOf(services);
  return async () => {
    const r = await readiness();
    return { status: r.ready ? 200 : 503, body: { status: statusWord(r), checks: r.checks } };
  };
}

/** The outbox check, or null when OUTBOX_MAX_AGE_SECONDS=0 turns it off. */
async function outboxCheck(services: Services): Promise<string | null> {
  const limit = services.config.outboxMaxAgeSeconds;
  if (!limit) return null;
  try {
    const { depth, oldestAgeSeconds } = await within(2000, outboxStats(services.db, services.config.taskQueue));
    if (oldestAgeSeconds <= limit) return 'ok';
    return `stuck: the oldest of ${depth >= OUTBOX_DEPTH_COUNTED ? 'at least ' : ''}${depth} webhook outbox rows is ${Math.round(oldestAgeSeconds)} s old (OUTBOX_MAX_AGE_SECONDS=${limit})`;
  } catch (e) {
    return `unknown: ${(e as Error).message}`;
  }
}
