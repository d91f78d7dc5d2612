import type Koa from 'koa';
import { outboxStats } from '../db/outbox-stats';
import { pingDatabase } from '../db/ping';
import { within } from '../runtime/deadline';
import type { Services } from './services';

/**
 * `/healthz`: the process is up. `/readyz`: Postgres and Temporal answer, and the webhook outbox
 * is draining (its oldest row is younger than OUTBOX_MAX_AGE_SECONDS); 503 names what is not.
 * The outbox is shared, so a stuck one turns every api process unready at once (docs/operations.md).
 */
export function healthRoutes(services: Services): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || (ctx.path !== '/healthz' && ctx.path !== '/readyz')) return next();
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    const checks: Record<string, string> = {};
    await Promise.all([
      within(2000, pingDatabase(services.db)).then(() => (checks.postgres = 'ok'), (e) => (checks.postgres = `unreachable: ${e.message}`)),
      services.temporal
        ? within(2000, services.temporal.connection.healthService.check({})).then(
            () => (checks.temporal = 'ok'),
            (e) => (checks.temporal = `unreachable: ${String(e.message).split('\n')[0]}`),
          )
        : Promise.resolve((checks.temporal = 'unreachable: not connected')),
      outboxCheck(services).then((v) => v && (checks.outbox = v)),
    ]);
    const ready = Object.values(checks).every((v) => v === 'ok');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'unavailable', checks };
  };
}

/** The outbox check, or null when OUTBOX_MAX_AGE_SECONDS=0 turns it off. */
async function outboxCheck(services: Services): Promise<string | null> {
  const limit = services.config.outboxMaxAgeSeconds;
  if (!limit) return null;
  try {
    const { depth, oldestAgeSeconds } = await within(2000, outboxStats(services.db, services.config.taskQueue));
    if (oldestAgeSeconds <= limit) return 'ok';
    return `stuck: the oldest of ${depth} webhook outbox rows is ${Math.round(oldestAgeSeconds)} s old (OUTBOX_MAX_AGE_SECONDS=${limit})`;
  } catch (e) {
    return `unknown: ${(e as Error).message}`;
  }
}
