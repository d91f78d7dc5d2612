import type { Readable } from 'node:stream';
import type Router from '@koa/router';
import { exactRouter } from './router';
import { invalidRequest } from '../operations/errors';
import { admit } from './gate';
import { readJsonObject } from './json-body';
import { executeOperation } from '../operations/execute';
import type { Operation } from '../operations/types';
import type { Services } from '../operations/services';

/** `/products/{id}` → `/products/:id` */
export const koaPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');

/**
 * The query string as input fields. A parameter given twice is refused by name. The object
 * has no prototype, so `?__proto__=…` stays an ordinary (unknown, hence refused) field
 * instead of vanishing into the prototype slot.
 */
function queryObject(query: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(query)) {
    if (Array.isArray(v)) throw invalidRequest(`query parameter "${k}" was given more than once`, k);
    out[k] = v;
  }
  return out;
}

/** REST routes generated from the operation table; mounted under /v1 on both hosts. */
export function restRouter(ops: Operation[], services: Services): Router {
  const router = exactRouter();
  for (const op of ops) {
    if (!op.rest) continue;
    const method = op.rest.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete';
    router[method](koaPath(op.rest.path), async (ctx) => {
      const { actor, rateHeaders } = await admit(services.db, ctx.headers, ctx.req.rawHeaders);
      ctx.state.tenantId = actor.tenantId;
      ctx.state.keyId = actor.keyId;
      ctx.set(rateHeaders);
      const body = op.rest!.method === 'GET' ? {} : await readJsonObject(ctx);
      if (op.rest!.noBody && Object.keys(body).length > 0)
        throw invalidRequest(`${op.rest!.method} ${op.rest!.path} takes no body`);
      const input = { ...queryObject(ctx.query), ...body, ...ctx.params };
      const response = {
        headers: {} as Record<string, string>,
        status: undefined as number | undefined,
        text: undefined as string | undefined,
        stream: undefined as Readable | undefined,
      };
      const result = await executeOperation(op, actor, input, {
        requestId: ctx.state.requestId,
        services,
        log: ctx.state.log,
        surface: 'rest',
        prefer: ctx.get('prefer') || undefined,
        response,
      });
      ctx.set(response.headers);
      ctx.body = response.stream ?? response.text ?? result;
      if (response.status) ctx.status = response.status;
    });
  }
  return router;
}
