import http from 'node:http';
import type net from 'node:net';
import Koa from 'koa';
import { createStore } from './store';
import { createRateLimiter } from './rate-limit';
import type { EmulatorFactory, EmulatorModule, EmulatorOptions, EmulatorStore } from './types';

export interface Fault {
  mode: 'down' | 'error' | 'rate_limit' | 'latency';
  status?: number;
  ms?: number;
  retry_after?: number;
  route?: string;
}

export interface RunningEmulator {
  url: string;
  port: number;
  module: EmulatorModule;
  store: EmulatorStore;
  close: () => Promise<void>;
}

const CONTROL = '/__control';

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  if (!raw) return {};
  const parsed = JSON.parse(raw);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('body must be a JSON object');
  return parsed;
}

/**
 * Hosts one provider emulator: the provider's API (from the module) behind fault injection,
 * and the control API of docs/emulators.md under /__control (never faulted).
 */
export async function startEmulator(factory: EmulatorFactory, opts: EmulatorOptions): Promise<RunningEmulator> {
  const host = opts.host ?? '127.0.0.1';
  const store = createStore(opts.stateFile);
  let publicUrl = opts.publicUrl ?? '';
  const module = factory(store, { publicUrl: () => publicUrl });
  let faults: Fault[] = [];
  const limiter = createRateLimiter(module.provider, opts.rateLimit ?? { enabled: false }, module.keyMode);

  const control = async (ctx: Koa.Context) => {
    const sub = ctx.path.slice(CONTROL.length) || '/';
    const method = ctx.method;
    const body = method === 'POST' || method === 'PUT' ? await readJson(ctx.req) : {};
    if (sub === '/faults' && method === 'POST') {
      const mode = body.mode as Fault['mode'];
      if (!['down', 'error', 'rate_limit', 'latency'].includes(mode)) {
        ctx.status = 400;
        ctx.body = { error: 'mode must be one of down, error, rate_limit, latency' };
        return;
      }
      const fault: Fault = {
        mode,
        status: typeof body.status === 'number' ? body.status : undefined,
        ms: typeof body.ms === 'number' ? body.ms : undefined,
        retry_after: typeof body.retry_after === 'number' ? body.retry_after : undefined,
        route: typeof body.route === 'string' ? body.route : undefined,
      };
      faults.push(fault);
      ctx.body = { faults };
      return;
    }
    if (sub === '/faults' && method === 'DELETE') {
      faults = [];
      ctx.body = { faults };
      return;
    }
    if (sub === '/faults' && method === 'GET') {
      ctx.body = { faults };
      return;
    }
    if (sub === '/rate-limit') {
      // The provider's documented limit (or an override), and the counters that show whether a caller kept to it.
      if (method === 'POST') {
        const limit = body.limit;
        const windowMs = body.window_ms;
        const override =
          limit === undefined && windowMs === undefined
            ? undefined
            : { limit: Number(limit), window_ms: Number(windowMs ?? 1000) };
        if (
          override &&
          !(
            Number.isInteger(override.limit) &&
            override.limit >= 1 &&
            Number.isInteger(override.window_ms) &&
            override.window_ms >= 1
          )
        ) {
          ctx.status = 400;
          ctx.body = { error: 'limit and window_ms must be positive integers' };
          return;
        }
        limiter.configure({ enabled: body.enabled !== false, override });
      } else if (method === 'DELETE') {
        limiter.configure({ enabled: false });
      }
      ctx.body = limiter.view();
      return;
    }
    if (sub === '/state' && method === 'GET') {
      ctx.body = store.kinds;
      return;
    }
    if (sub === '/events' && method === 'POST') {
      if (typeof body.type !== 'string' || typeof body.target !== 'string') {
        ctx.status = 400;
        ctx.body = { error: 'type and target are required strings' };
        return;
      }
      ctx.body = await module.sendEvent(body as never);
      return;
    }
    if (sub === '/checkout' && method === 'POST' && module.checkout) {
      ctx.body = await module.checkout(body as never);
      return;
    }
    if (sub === '/sandbox-purchase' && method === 'POST' && module.sandboxPurchase) {
      ctx.body = await module.sandboxPurchase(body as never);
      return;
    }
    const extra = module.control?.[`${method} ${sub}`];
    if (extra) {
      ctx.body = await extra(body);
      return;
    }
    ctx.status = 404;
    ctx.body = { error: `no control route ${method} ${sub}` };
  };

  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      ctx.status = (err as { status?: number }).status ?? 400;
      ctx.body = { error: (err as Error).message };
    }
  });
  app.use(async (ctx, next) => {
    if (ctx.path === CONTROL || ctx.path.startsWith(`${CONTROL}/`)) return control(ctx);
    // Counted on arrival, before any added latency, as the provider's own front door would.
    const admitted = limiter.admit(ctx);
    const active = faults.filter((f) => !f.route || ctx.path.startsWith(f.route));
    for (const f of active) {
      if (f.mode === 'latency') await new Promise((r) => setTimeout(r, f.ms ?? 1000));
    }
    if (!admitted) return;
    for (const f of active) {
      if (f.mode === 'down') {
        // Drop the connection without an HTTP answer, as an unreachable host would.
        ctx.respond = false;
        ctx.req.socket.destroy();
        return;
      }
      if (f.mode === 'error') {
        ctx.status = f.status ?? 503;
        ctx.body = { error: { type: 'api_error', message: 'emulated server error' } };
        return;
      }
      if (f.mode === 'rate_limit') {
        ctx.status = 429;
        ctx.set('Retry-After', String(f.retry_after ?? 1));
        ctx.body = { error: { type: 'rate_limit_error', message: 'emulated rate limit' } };
        return;
      }
    }
    return next();
  });
  app.use(module.api);

  const server = http.createServer(app.callback());
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  const url = `http://${host}:${port}`;
  if (!publicUrl) publicUrl = url;
  return {
    url,
    port,
    module,
    store,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => {
          // After the last request: whatever it changed is on disk before close resolves.
          store.flush();
          resolve();
        });
      }),
  };
}

/** POST a JSON or raw body to a webhook target, returning the HTTP status (0 when unreachable). */
export async function deliver(target: string, body: string, headers: Record<string, string>): Promise<number> {
  try {
    const res = await fetch(target, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}
