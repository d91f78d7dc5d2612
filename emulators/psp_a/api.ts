import type http from 'node:http';
import type Koa from 'koa';
import type { Accounts } from './accounts';
import { StripeApiError, unrecognizedUrl } from './errors';
import { FormError, parseForm, type FormObject } from './form';
import { randomBase62 } from './ids';
import { IdempotencyCache } from './idempotency';
import { API_VERSION } from './objects';
import { match, type Route } from './router';

export async function readRaw(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Stripe pretty-prints its JSON answers. */
export function sendJson(ctx: Koa.Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(body, null, 2);
}

/**
 * The /v1 API: form-encoded bodies and query strings, Bearer (or Basic) key auth with the
 * Stripe-Account header, Idempotency-Key on writes, Stripe's error shape, Request-Id header.
 */
export function createApiMiddleware(deps: { accounts: Accounts; routes: Route[] }): Koa.Middleware {
  const idempotency = new IdempotencyCache();
  return async (ctx, next) => {
    if (!ctx.path.startsWith('/v1/')) return next();
    const method = ctx.method;
    ctx.set('Request-Id', `req_${randomBase62(14)}`);
    ctx.set('Stripe-Version', ctx.get('stripe-version') || API_VERSION);
    try {
      const raw = method === 'POST' || method === 'DELETE' ? await readRaw(ctx.req) : '';
      let body: FormObject;
      let query: FormObject;
      try {
        body = parseForm(raw);
        query = parseForm(ctx.querystring);
      } catch (err) {
        if (err instanceof FormError) throw new StripeApiError(400, 'invalid_request_error', err.message);
        throw err;
      }
      const stripeAccount = ctx.get('stripe-account') || undefined;
      const scope = deps.accounts.authenticate(ctx.get('authorization') || undefined, stripeAccount);
      if (stripeAccount) ctx.set('Stripe-Account', scope.account);
      const found = match(deps.routes, method, ctx.path);
      if (!found || found === 'method') throw unrecognizedUrl(method, ctx.path);
      const key = method === 'POST' || method === 'DELETE' ? ctx.get('idempotency-key') : '';
      if (key) {
        ctx.set('Idempotency-Key', key);
        const replay = idempotency.lookup(scope, key, method, ctx.path, body);
        if (replay) {
          ctx.set('Idempotent-Replayed', 'true');
          sendJson(ctx, replay.status, replay.body);
          return;
        }
      }
      const result = found.route.handler({ method, path: ctx.path, params: found.params, query, body, scope });
      if (key) idempotency.save(scope, key, method, ctx.path, body, 200, result);
      sendJson(ctx, 200, result);
    } catch (err) {
      if (err instanceof StripeApiError) {
        sendJson(ctx, err.status, err.toBody());
        return;
      }
      sendJson(ctx, 500, { error: { type: 'api_error', message: 'An unknown error occurred in the emulator.' } });
      console.error('[psp_a emulator]', err);
    }
  };
}
