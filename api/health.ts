import type Koa from 'koa';
import type { Services } from './services';

/** A promise that gives up after `ms` (health checks, the webhook hand-over to Temporal). */
export async function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = () => Object.assign(new Error(`no answer within ${ms} ms`), { name: 'TimeoutError' });
    return await Promise.race([p, new Promise<T>((_, rej) => (timer = setTimeout(() => rej(timeout()), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** `/healthz`: the process is up. `/readyz`: Postgres and Temporal answer; 503 names the one that does not. */
export function healthRoutes(services: Services): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || (ctx.path !== '/healthz' && ctx.path !== '/readyz')) return next();
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    const checks: Record<string, string> = {};
    await Promise.all([
      within(2000, services.db.raw('select 1')).then(() => (checks.postgres = 'ok'), (e) => (checks.postgres = `unreachable: ${e.message}`)),
      services.temporal
        ? within(2000, services.temporal.connection.healthService.check({})).then(
            () => (checks.temporal = 'ok'),
            (e) => (checks.temporal = `unreachable: ${String(e.message).split('\n')[0]}`),
          )
        : Promise.resolve((checks.temporal = 'unreachable: not connected')),
    ]);
    const ready = Object.values(checks).every((v) => v === 'ok');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'unavailable', checks };
  };
}
