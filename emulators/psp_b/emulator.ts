import type http from 'node:http';
import type Koa from 'koa';
import type { EmulatorFactory } from '../common/types';
import { accountView, authenticate, ensureAccount, type PaddleAccount } from './accounts';
import { billingRoutes, checkout } from './billing';
import { catalogRoutes } from './catalog';
import { sendEvent, type SendOptions } from './events';
import { handleOAuth } from './oauth';
import { PaddleError, badRequest, sendError } from './respond';
import type { Api, Route } from './routes';

/**
 * psp_b: a stateful subset of the Paddle Billing API (v1) — products, prices, discounts,
 * customers, subscriptions, transactions — with Paddle's paths, envelopes
 * ({ data, meta: { request_id, pagination } }), cursor pagination, error shape and Bearer
 * API-key auth. Sandbox and live keys are distinct and every object records the seller and
 * environment that created it (`_account`, `_mode`; never sent on the wire).
 */

const routes: Route[] = [...catalogRoutes, ...billingRoutes];

async function readRaw(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJsonObject(raw: string): Record<string, unknown> {
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badRequest('Invalid request: body is not valid JSON.');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw badRequest('Invalid request: body must be a JSON object.');
  return parsed as Record<string, unknown>;
}

export const createEmulator: EmulatorFactory = (store, { publicUrl }) => {
  const api: Api = { store, publicUrl };

  const middleware: Koa.Middleware = async (ctx) => {
    let raw: string | undefined;
    const rawBody = async () => (raw ??= await readRaw(ctx.req));
    try {
      if (await handleOAuth(store, ctx, rawBody)) return;
      const caller = authenticate(store, ctx.get('authorization') || undefined);
      const version = ctx.get('paddle-version');
      if (version && version !== '1') throw badRequest(`Invalid request: unsupported Paddle-Version ${version}.`);
      for (const route of routes) {
        if (route.method !== ctx.method) continue;
        const m = route.path.exec(ctx.path);
        if (!m) continue;
        const body = ctx.method === 'GET' ? {} : parseJsonObject(await rawBody());
        await route.handler(api, { ctx, caller, params: m.slice(1).map(decodeURIComponent), body });
        return;
      }
      throw new PaddleError(404, 'not_found', `${ctx.method} ${ctx.path} is not a Paddle API route here`);
    } catch (err) {
      if (err instanceof PaddleError) return sendError(ctx, err);
      ctx.app.emit('error', err, ctx);
      sendError(ctx, new PaddleError(500, 'internal_error', 'An internal error has occurred.'));
    }
  };

  return {
    provider: 'psp_b',
    api: middleware,
    sendEvent: (params) => sendEvent(store, params as SendOptions),
    checkout: (params) => checkout(store, publicUrl(), params),
    control: {
      'POST /accounts': (body) =>
        accountView(ensureAccount(store, typeof body.account === 'string' && body.account ? body.account : undefined)),
      'GET /accounts': () => ({ accounts: store.list('accounts').map((a) => accountView(a as PaddleAccount)) }),
    },
  };
};
