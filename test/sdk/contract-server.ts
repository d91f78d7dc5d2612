import http from 'node:http';
import type net from 'node:net';

/**
 * A local HTTP server speaking the documented `/v1/sdk/*` contract (docs/sdk.md,
 * "Endpoints"), so unit tests can count requests and go offline. The end-to-end test
 * runs the SDK against the real service instead.
 */
export interface ContractState {
  entitlements: Array<Record<string, unknown>>;
  cacheTtlSeconds: number;
  checkoutUrl: string | null;
  paywall: Record<string, unknown> | null;
  storePurchaseStatus: number;
}

export interface Recorded {
  method: string;
  path: string;
  authorization: string | undefined;
  body: any;
}

export async function startContractServer(initial: Partial<ContractState> = {}) {
  const state: ContractState = {
    entitlements: [],
    cacheTtlSeconds: 604_800,
    checkoutUrl: 'https://checkout.example/pay/1',
    paywall: { title: 'Go premium' },
    storePurchaseStatus: 200,
    ...initial,
  };
  const requests: Recorded[] = [];
  let offline = false;
  const sockets = new Set<net.Socket>();
  const server = http.createServer(async (req, res) => {
    if (offline) return req.socket.destroy();
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({
      method: req.method ?? '',
      path: url.pathname + url.search,
      authorization: req.headers.authorization,
      body: raw ? JSON.parse(raw) : undefined,
    });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const sub = url.pathname.match(/^\/v1\/sdk\/subscribers\/([^/]+)$/);
    if (req.method === 'GET' && sub)
      return send(200, {
        object: 'subscriber',
        app_user_id: decodeURIComponent(sub[1]),
        entitlements: state.entitlements,
        cache_ttl_seconds: state.cacheTtlSeconds,
      });
    const identify = url.pathname.match(/^\/v1\/sdk\/subscribers\/([^/]+)\/identify$/);
    if (req.method === 'POST' && identify)
      // The new user's subscriber view (an anonymous user's purchases would now be theirs too).
      return send(200, {
        object: 'subscriber',
        app_user_id: JSON.parse(raw).new_app_user_id,
        is_premium: state.entitlements.some((e: any) => e.is_active),
        entitlements: state.entitlements,
        cache_ttl_seconds: state.cacheTtlSeconds,
      });
    if (req.method === 'GET' && url.pathname === '/v1/sdk/checkout')
      return state.checkoutUrl
        ? send(200, { object: 'checkout_link', plan_id: url.searchParams.get('plan_id'), url: state.checkoutUrl })
        : send(404, { error: 'not_found', detail: 'payment link not found' });
    if (req.method === 'GET' && url.pathname === '/v1/sdk/paywall')
      return state.paywall ? send(200, state.paywall) : send(404, { error: 'not_found', detail: 'paywall not found' });
    if (req.method === 'POST' && url.pathname === '/v1/sdk/store-purchases')
      // The service answers the app user's entitlements (the subscriber shape), as GET /subscribers does.
      return state.storePurchaseStatus === 200
        ? send(200, {
            object: 'subscriber',
            app_user_id: 'u1',
            mode: 'test',
            is_premium: state.entitlements.some((e: any) => e.is_active),
            entitlements: state.entitlements,
            cache_ttl_seconds: state.cacheTtlSeconds,
          })
        : send(state.storePurchaseStatus, {
            error: 'purchase_token_reused',
            detail: 'token registered by another app user',
          });
    send(404, { error: 'not_found', detail: 'no route' });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    state,
    requests,
    /** Requests for the subscriber, the ones the TTL governs. */
    subscriberRequests: () => requests.filter((r) => r.path.startsWith('/v1/sdk/subscribers/')),
    setOffline(v: boolean) {
      offline = v;
      if (v) for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export class FakeClock {
  constructor(public t = Date.UTC(2026, 0, 1)) {}
  now() {
    return this.t;
  }
  advance(ms: number) {
    this.t += ms;
  }
}

export const activeEntitlement = {
  id: 'ent_1',
  object: 'entitlement',
  app_user_id: 'u1',
  provider: 'psp_a',
  state: 'active',
  is_active: true,
  is_sandbox: true,
};
export const HOUR = 3_600_000;
export const WEEK = 7 * 24 * HOUR;
