import type Koa from 'koa';
import { executeOperation } from '../../operations/execute';
import { ApiError } from '../../operations/errors';
import type { Operation } from '../../operations/types';
import type { Services } from '../../operations/services';
import { dashboardActor } from './actor';
import { rateLimited, takeToken } from '../rate-limit';
import { rateLimitRefusals } from '../../runtime/metrics';

/**
 * A dashboard write runs the operation as the signed-in person: the same policy, validation,
 * audit (the operation's name, the person, surface `dashboard`) and behaviour as REST and the
 * tools, and one token from the tenant's bucket that REST and the tools draw from (api/rate-limit.ts,
 * docs/limits.md), taken before it runs: an empty bucket is the API's 429 `rate_limited`, with its
 * `Retry-After`, and nothing is written. Reads that render a page spend nothing. A refusal (a 4xx)
 * becomes the page's form error, in a form's words (`formText`), with its status; anything else is
 * a fault and propagates.
 */
export async function runOperation<T = unknown>(
  services: Services,
  ctx: Koa.Context,
  op: Operation,
  input: Record<string, unknown>,
): Promise<{ ok: T } | { error: string; code: string; param?: string }> {
  const actor = dashboardActor(ctx);
  try {
    if (op.write) await spendToken(services, actor.tenantId);
    return {
      ok: (await executeOperation(op, actor, input, {
        requestId: ctx.state.requestId,
        services,
        log: ctx.state.log,
        surface: 'dashboard',
      })) as T,
    };
  } catch (e) {
    if (!(e instanceof ApiError) || e.status >= 500) throw e;
    ctx.status = e.status;
    ctx.set(e.headers);
    const param = typeof e.extra.param === 'string' ? e.extra.param : undefined;
    return { error: e.formText ?? e.detail ?? e.code, code: e.code, ...(param ? { param } : {}) };
  }
}

async function spendToken(services: Services, tenantId: string): Promise<void> {
  const decision = await takeToken(services.db, tenantId);
  if (decision.allowed) return;
  rateLimitRefusals.inc();
  throw rateLimited(decision);
}

/**
 * A page's read, exactly as a REST call makes it: the read operation as the signed-in person (the
 * operation policy with their role, its read-only tenant read, its serializer), spending no token.
 * The page's gate admitted the person already, so a refusal here is a fault and propagates; a page
 * that answers a missing record with its own 404 uses `runOperation` and reads the code.
 */
export async function readThrough<T>(
  services: Services,
  ctx: Koa.Context,
  op: Operation,
  input: Record<string, unknown> = {},
): Promise<T> {
  return (await executeOperation(op, dashboardActor(ctx), input, {
    requestId: ctx.state.requestId,
    services,
    log: ctx.state.log,
    surface: 'dashboard',
  })) as T;
}
