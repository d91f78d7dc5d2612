import type Koa from 'koa';
import { executeOperation } from '../../operations/execute';
import { ApiError } from '../../operations/errors';
import type { Operation } from '../../operations/types';
import type { Services } from '../../operations/services';
import { dashboardActor } from './actor';

/**
 * A dashboard write runs the operation as the signed-in person: the same policy, validation,
 * audit (the operation's name, the person, surface `dashboard`) and behaviour as REST and the
 * tools. Its refusal (a 4xx) becomes the page's form error, in a form's words (`formText`), with
 * its status; anything else is a fault and propagates.
 */
export async function runOperation<T = unknown>(
  services: Services,
  ctx: Koa.Context,
  op: Operation,
  input: Record<string, unknown>,
): Promise<{ ok: T } | { error: string; code: string; param?: string }> {
  try {
    return {
      ok: (await executeOperation(op, dashboardActor(ctx), input, {
        requestId: ctx.state.requestId,
        services,
        log: ctx.state.log,
        surface: 'dashboard',
      })) as T,
    };
  } catch (e) {
    if (!(e instanceof ApiError) || e.status >= 500) throw e;
    ctx.status = e.status;
    const param = typeof e.extra.param === 'string' ? e.extra.param : undefined;
    return { error: e.formText ?? e.detail ?? e.code, code: e.code, ...(param ? { param } : {}) };
  }
}
