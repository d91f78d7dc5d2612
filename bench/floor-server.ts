/**
 * The floor for `GET /v1/entitlements?limit=50`, and the variants that price the api's pieces.
 *
 * `GET /v1/entitlements?limit=50&tenant=<uuid>` is the floor: a bare Koa app running the one SQL
 * query the endpoint needs on a raw pg.Pool (max 20, as the api), with no auth, RLS, rate limit,
 * logging or audit; the tenant comes from the query string.
 *
 * `GET /s/<step>+<step>+…/v1/entitlements?…` is the same route with production pieces added, each
 * by calling the real function, so the benchmark can measure every piece side by side in one
 * process (each variant is its own Koa app; one shared knex pool, max 20):
 *   knex       the same query built with knex on a knex pool instead of a raw pg.Pool query
 *   auth       authenticate(): SHA-256 of the bearer key + api_keys lookup (tenant from the key)
 *   ratelimit  takeToken(): the shared per-tenant token-bucket upsert
 *   tx         withTenant(): BEGIN; set_config(role, app.tenant_id); query under RLS; COMMIT
 *   paging     the page with its exact total + the entitlement serializer: inside the tenant
 *              transaction as the api runs it (entitlementPage: written SQL, prepared), else the builder
 *              version (bench/lib/builder-page.ts)
 *   log        requestContext() + errorHandler(): Request-Id, pino child logger, one JSON line per request
 * and candidate changes (not production code — what-ifs for the report):
 *   authcache  authenticate() behind a 10 s in-process cache keyed by the key's hash
 *   gate1      auth + rate limit in one statement (a data-modifying CTE): one round trip instead of two
 *   tx1        withTenant() with BEGIN and both set_config in one simple-protocol round trip
 *
 * `GET /lists/v1/<list>?limit=50&tenant=<uuid>` is the floor of every list endpoint of /v1 (bench/api-lists.ts):
 * the same page statement the api runs (rows, count subquery, and the follow-up statement of
 * products, coupons and providers) on the raw pg.Pool, the tenant filtered by hand instead of RLS,
 * rows answered as they come (no serializer).
 *
 * Env: DATABASE_URL, PORT, POOL_MAX (20), LOG_LEVEL (info). stdout carries the request log.
 */
import http from 'node:http';
import Koa from 'koa';
import type { Knex } from 'knex';
import pg from 'pg';
import { bearerToken } from '../api/auth';
import { errorHandler, requestContext } from '../api/middleware';
import { paginate } from './lib/builder-page';
import { entitlementPage } from '../db/entitlements';
import { rateHeaders, rateLimited, takeToken, type RateDecision } from '../api/rate-limit';
import { createKnex } from '../db/knex';
import { withTenant } from '../db/tenant-tx';
import { readAsTenant } from '../db/tenant-read';
import { createLogger } from '../runtime/logger';
import { authenticate, authenticateCached, gateOneStatement, withTenantOneTrip } from './lib/whatif';
import { serializeEntitlement } from '../operations/entitlements/schema';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is required');
const port = Number(process.env.PORT || 4900);
const poolMax = Number(process.env.POOL_MAX || 20);
const logger = createLogger(process.env.LOG_LEVEL || 'info');

const KNOWN = ['knex', 'auth', 'authcache', 'gate1', 'ratelimit', 'tx', 'tx1', 'paging', 'log'] as const;
type Step = (typeof KNOWN)[number];

let rawPool: pg.Pool | undefined;
let knexDb: Knex | undefined;
const pool = () => (rawPool ??= new pg.Pool({ connectionString: url, max: poolMax }));
const kx = () => (knexDb ??= createKnex(url, { max: poolMax }));

const SQL = `select e.*, p.sku from entitlements e left join products p on p.id = e.product_id
  where e.tenant_id = $1 order by e.created_at desc, e.id desc limit $2`;

// ---- the floor of every list (bench/api-lists.ts) ----

interface ListFloor {
  table: string;
  columns: string;
  from: string;
  /** The follow-up statement on the page's ids, as the api runs it. */
  then?: string;
}
const CONNECTION_COLUMNS =
  'provider_connections.id, provider_connections.provider, provider_connections.account_ref, provider_connections.label, provider_connections.is_default, provider_connections.is_active, provider_connections.created_at, provider_connections.credential_test_enc is not null as has_test, provider_connections.credential_live_enc is not null as has_live, provider_connections.webhook_secret_enc is not null as has_whsec';
const ENDPOINT_COLUMNS = [
  'id',
  'tenant_id',
  'url',
  'description',
  'event_types',
  'enabled',
  'disabled_reason',
  'previous_secret_expires_at',
  'secret_rotated_at',
  'created_at',
  'updated_at',
]
  .map((c) => `webhook_endpoints.${c}`)
  .join(', ');
const one = (table: string): ListFloor => ({ table, columns: `${table}.*`, from: table });
const LIST_FLOORS: Record<string, ListFloor> = {
  '/v1/entitlements': {
    table: 'entitlements',
    columns: 'entitlements.*, products.sku',
    from: 'entitlements left join products on products.id = entitlements.product_id',
  },
  '/v1/products': {
    ...one('products'),
    then: 'select * from product_provider_refs where product_id = any($1::uuid[]) order by provider, mode',
  },
  '/v1/subscribers': {
    table: 'subscriptions',
    columns: 'subscriptions.*, products.sku',
    from: 'subscriptions left join products on products.id = subscriptions.product_id',
  },
  '/v1/coupons': { ...one('coupons'), then: 'select * from coupon_counterparts where coupon_id = any($1::uuid[])' },
  '/v1/audit': one('audit_entries'),
  '/v1/webhooks': one('webhook_deliveries'),
  '/v1/webhook-endpoints': { table: 'webhook_endpoints', columns: ENDPOINT_COLUMNS, from: 'webhook_endpoints' },
  '/v1/outbound-events': one('outbound_events'),
  '/v1/outbound-deliveries': {
    table: 'outbound_deliveries',
    columns: 'outbound_deliveries.*, outbound_events.type, outbound_events.order_key',
    from: 'outbound_deliveries join outbound_events on outbound_events.id = outbound_deliveries.event_id',
  },
  '/v1/sync/events': one('sync_events'),
  '/v1/providers': {
    table: 'provider_connections',
    columns: CONNECTION_COLUMNS,
    from: 'provider_connections',
    then: `select l.connection_id, l.app_id, l.external_id, l.url, l.mode, p.sku, 'payment_link' as kind
       from payment_links l join products p on p.id = l.product_id where l.connection_id = any($1::uuid[])
     union all
     select pp.connection_id, pp.app_id, pp.external_id, null as url, pp.mode, p.sku, 'plan' as kind
       from provider_plans pp join products p on p.id = pp.product_id where pp.connection_id = any($1::uuid[])`,
  },
};

const listFloor = new Koa();
listFloor.use(async (ctx) => {
  const f = LIST_FLOORS[ctx.path];
  if (!f || ctx.method !== 'GET') {
    ctx.status = 404;
    return;
  }
  const limit = Math.min(200, Math.max(1, Number(ctx.query.limit ?? 50) || 50));
  const tenantId = String(ctx.query.tenant ?? '');
  const where = `where ${f.table}.tenant_id = $1`;
  const { rows } = await pool().query(
    `select ${f.columns}, (select count(*) as n from ${f.from} ${where}) as __total from ${f.from} ${where} order by ${f.table}.created_at desc, ${f.table}.id desc limit $2 offset 0`,
    [tenantId, limit],
  );
  const more = f.then && rows.length ? (await pool().query(f.then, [rows.map((r) => r.id)])).rows : [];
  const total = rows.length ? Number(rows[0].__total) : 0;
  ctx.body = { data: rows, more, pagination: { limit, offset: 0, total, has_more: rows.length < total } };
});
const listFloorHandler: http.RequestListener = (() => {
  const callback = listFloor.callback();
  return (req, res) => void callback(req, res);
})();

// ---- the variants ----

function variant(steps: Set<Step>): Koa {
  const app = new Koa();
  app.proxy = true;
  if (steps.has('log')) {
    app.use(requestContext(logger));
    app.use(errorHandler());
  }
  const bare = steps.size === 0 || (steps.size === 1 && steps.has('log'));
  app.use(async (ctx) => {
    if (ctx.path !== '/v1/entitlements' || ctx.method !== 'GET') {
      ctx.status = 404;
      return;
    }
    const limit = Math.min(200, Math.max(1, Number(ctx.query.limit ?? 50) || 50));
    let tenantId = String(ctx.query.tenant ?? '');
    if (bare) {
      const { rows } = await pool().query(SQL, [tenantId, limit]);
      ctx.body = { data: rows, pagination: { limit, offset: 0, total: null, has_more: rows.length === limit } };
      return;
    }
    const db = kx();
    const auth = ctx.headers.authorization;
    let decision: RateDecision | undefined;
    if (steps.has('gate1')) {
      const g = await gateOneStatement(db, bearerToken(auth));
      tenantId = g.actor.tenantId;
      decision = g.decision;
    } else if (steps.has('authcache')) {
      tenantId = (await authenticateCached(db, bearerToken(auth))).tenantId;
    } else if (steps.has('auth')) {
      tenantId = (await authenticate(db, bearerToken(auth))).tenantId;
    }
    if (steps.has('ratelimit') && !decision) decision = await takeToken(db, tenantId);
    if (decision) {
      if (!decision.allowed) throw rateLimited(decision);
      ctx.set(rateHeaders(decision));
    }
    const rls = steps.has('tx') || steps.has('tx1');
    const run = async (q: Knex.QueryBuilder) => {
      // Without the tenant transaction there is no RLS: filter explicitly, as the bare query does.
      const base = q.leftJoin('products', 'products.id', 'entitlements.product_id');
      if (!rls) base.where('entitlements.tenant_id', tenantId);
      if (steps.has('paging')) {
        return paginate(
          base,
          { limit, offset: 0, table: 'entitlements', columns: ['entitlements.*', 'products.sku'] },
          serializeEntitlement,
        );
      }
      const rows = await base
        .select('entitlements.*', 'products.sku')
        .orderBy([
          { column: 'entitlements.created_at', order: 'desc' },
          { column: 'entitlements.id', order: 'desc' },
        ])
        .limit(limit);
      return { data: rows, pagination: { limit, offset: 0, total: null, has_more: rows.length === limit } };
    };
    if (steps.has('tx1')) ctx.body = await withTenantOneTrip(db, tenantId, (t) => run(t('entitlements')));
    else if (steps.has('tx') && steps.has('paging')) {
      // As the api runs it: the page as written, prepared SQL (db/entitlements.ts), in a tenant read under RLS.
      ctx.body = await readAsTenant(db, tenantId, async (reader) => {
        const page = await entitlementPage(reader, {}, { limit, offset: 0 });
        return { ...page, data: page.data.map(serializeEntitlement) };
      });
    } else if (steps.has('tx')) ctx.body = await withTenant(db, tenantId, (trx) => run(trx('entitlements')));
    else ctx.body = await run(db('entitlements'));
  });
  return app;
}

const handlers = new Map<string, http.RequestListener>();
function handlerFor(spec: string): http.RequestListener {
  let h = handlers.get(spec);
  if (!h) {
    const steps = new Set(spec.split('+').filter(Boolean) as Step[]);
    for (const s of steps) if (!KNOWN.includes(s)) throw new Error(`unknown step "${s}" (known: ${KNOWN.join(', ')})`);
    const callback = variant(steps).callback();
    h = (req, res) => void callback(req, res);
    handlers.set(spec, h);
  }
  return h;
}

const server = http.createServer((req, res) => {
  const u = req.url ?? '/';
  if (u === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  if (u.startsWith('/lists/')) {
    req.url = u.slice('/lists'.length);
    listFloorHandler(req, res);
    return;
  }
  let spec = '';
  if (u.startsWith('/s/')) {
    const end = u.indexOf('/', 3);
    spec = u.slice(3, end === -1 ? u.length : end);
    req.url = end === -1 ? '/' : u.slice(end);
  }
  let h: http.RequestListener;
  try {
    h = handlerFor(spec);
  } catch (e) {
    res.writeHead(400).end(String((e as Error).message));
    return;
  }
  h(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => logger.warn({ port }, 'floor server listening'));
const shutdown = () => {
  // Let requests still queued for a pool connection finish before the pools go away.
  server.close(() => void Promise.all([rawPool?.end(), knexDb?.destroy()]).finally(() => process.exit(0)));
  server.closeIdleConnections();
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
