import type { Knex } from 'knex';
import pg from 'pg';
import { pino } from 'pino';
import type { KeyActor } from '../../operations/actor';

import { requestContext } from '../../api/middleware';
import { executeOperation } from '../../operations/execute';
import { paginate } from './builder-page';
import { takeToken } from '../../api/rate-limit';
import type { Services } from '../../operations/services';
import { createKnex } from '../../db/knex';
import { findKeyTakingToken } from '../../db/api-keys';
import { entitlementPage } from '../../db/entitlements';
import { hashSecretKey } from '../../db/key-material';
import { withTenant } from '../../db/tenant-tx';
import { readAsTenant } from '../../db/tenant-read';
import { createLogger } from '../../runtime/logger';
import { loadConfig } from '../../runtime/config';
import { createVault, generateMasterKey } from '../../vault/vault';
import { createAdapters } from '../../providers';
import { pidsCpu } from './cpu';
import type { BenchDatabase } from './db';
import { authenticate, authenticateCached, gateOneStatement, withTenantOneTrip } from './whatif';
import { listEntitlements } from '../../operations/entitlements/list';
import { serializeEntitlement } from '../../operations/entitlements/schema';

/**
 * The request path's pieces measured one at a time, in this process, without HTTP: each piece is
 * called by `concurrency` workers in a loop for a short window, and its cost is this process's
 * CPU and this pool's Postgres backends' CPU per call. A piece of 200 µs measured directly is far
 * steadier than the same 200 µs read as the difference of two 2,000 µs totals.
 */

export interface Piece {
  name: string;
  /** Database round trips per call. */
  trips: number | string;
  what: string;
  concurrency: number;
  call: (i: number) => Promise<unknown>;
}

export interface PieceResult {
  calls: number;
  nodeUs: number;
  pgUs: number;
  /** Mean time per call (Little's law over the window), ms. */
  meanMs: number;
}

const ENTITLEMENTS_SQL = `select e.*, p.sku from entitlements e left join products p on p.id = e.product_id
  where e.tenant_id = $1 order by e.created_at desc, e.id desc limit 50`;

export interface PieceKit {
  pieces: Piece[];
  measure(p: Piece, seconds: number): Promise<PieceResult>;
  close(): Promise<void>;
}

export async function pieceKit(db: BenchDatabase, appName: string): Promise<PieceKit> {
  const url = (extra: Record<string, string> = {}) => {
    const u = new URL(db.url);
    u.searchParams.set('application_name', appName);
    for (const [k, v] of Object.entries(extra)) u.searchParams.set(k, v);
    return u.toString();
  };
  // Three pools of 20 at most (max_connections is shared): the api's, one without prepared statements, raw pg.
  const kx: Knex = createKnex(url(), { max: 20 });
  const kxUnprepared: Knex = createKnex(url(), { max: 20 }, { prepareStatements: false });
  const raw = new pg.Pool({ connectionString: url(), max: 20 });
  const tenants = db.tenants;
  const n = tenants.length;
  const t = (i: number) => tenants[i % n];

  const rowsOnce = (await withTenant(kx, t(0).id, (trx) =>
    trx('entitlements')
      .leftJoin('products', 'products.id', 'entitlements.product_id')
      .select('entitlements.*', 'products.sku')
      .limit(50),
  )) as Record<string, unknown>[];
  const silent = createLogger(
    'info',
    pino.destination({ dest: '/dev/null', sync: true }) as unknown as NodeJS.WritableStream,
  );
  const mw = requestContext(silent);
  // Built as api/main.ts builds them, though the read measured here uses neither vault nor adapters.
  const config = loadConfig({ NODE_ENV: 'test' });
  const services: Services = {
    db: kx,
    config,
    temporal: null,
    vault: createVault(generateMasterKey()),
    adapters: createAdapters(config),
  };
  const actorOf = (i: number): KeyActor => ({
    kind: 'api_key',
    tenantId: t(i).id,
    keyId: t(i).id,
    scopes: ['subscribers:read'],
    keyName: 'bench',
    expiresAt: null,
  });
  const noDb = { ...listEntitlements, handler: async () => ({}) };

  const page = (q: Knex.QueryBuilder) =>
    paginate(
      q.leftJoin('products', 'products.id', 'entitlements.product_id'),
      { limit: 50, offset: 0, table: 'entitlements', columns: ['entitlements.*', 'products.sku'] },
      serializeEntitlement,
    );
  const plain = (q: Knex.QueryBuilder) =>
    q
      .leftJoin('products', 'products.id', 'entitlements.product_id')
      .select('entitlements.*', 'products.sku')
      .orderBy([
        { column: 'entitlements.created_at', order: 'desc' },
        { column: 'entitlements.id', order: 'desc' },
      ])
      .limit(50);

  const pieces: Piece[] = [
    {
      name: 'round trip: select 1',
      trips: 1,
      what: 'knex.raw("select 1"): the price of one round trip',
      concurrency: 16,
      call: () => kx.raw('select 1'),
    },
    {
      name: 'query, raw pg (the floor)',
      trips: 1,
      what: "the floor's query on a pg.Pool, tenant filter explicit",
      concurrency: 16,
      call: (i) => raw.query(ENTITLEMENTS_SQL, [t(i).id]),
    },
    {
      name: 'query, knex builder',
      trips: 1,
      what: 'the same query built by knex',
      concurrency: 16,
      call: (i) => plain(kx('entitlements')).where('entitlements.tenant_id', t(i).id),
    },
    {
      name: 'authenticate()',
      trips: 1,
      what: 'SHA-256 + api_keys lookup (+ last_used_at at most once a minute per key)',
      concurrency: 16,
      call: (i) => authenticate(kx, t(i).key),
    },
    {
      name: 'takeToken(), synchronous_commit=on',
      trips: 1,
      what: 'the bucket upsert as the api runs it',
      concurrency: 16,
      call: (i) => takeToken(kx, t(i).id),
    },
    {
      name: 'withTenant(), empty',
      trips: 3,
      what: 'BEGIN; set_config(role, tenant); COMMIT — knex transaction',
      concurrency: 16,
      call: (i) => withTenant(kx, t(i).id, async () => {}),
    },
    {
      name: 'withTenant() + query',
      trips: 4,
      what: 'the query under RLS inside the tenant transaction',
      concurrency: 16,
      call: (i) => withTenant(kx, t(i).id, (trx) => plain(trx('entitlements'))),
    },
    {
      name: 'withTenant() + paginate()',
      trips: 4,
      what: "the handler's DB work: + count subquery + serializer (page prepared)",
      concurrency: 16,
      call: (i) => withTenant(kx, t(i).id, (trx) => page(trx('entitlements'))),
    },
    {
      name: 'withTenant() + paginate(), unprepared',
      trips: 4,
      what: 'the same, the page statement parsed and planned every time',
      concurrency: 16,
      call: (i) => withTenant(kxUnprepared, t(i).id, (trx) => page(trx('entitlements'))),
    },
    {
      name: 'readAsTenant() + entitlementPage()',
      trips: 3,
      what: 'what the api runs: the page as written SQL (pageFromSql, prepared, times as ISO text) + serializer, in a tenant read (no knex transaction)',
      concurrency: 16,
      call: (i) =>
        readAsTenant(kx, t(i).id, async (reader) =>
          (await entitlementPage(reader, {}, { limit: 50, offset: 0 })).data.map(serializeEntitlement),
        ),
    },
    {
      name: 'gate statement (api)',
      trips: 1,
      what: 'findKeyTakingToken(): key lookup + bucket take, one prepared statement',
      concurrency: 16,
      call: (i) => findKeyTakingToken(kx, hashSecretKey(t(i).key)),
    },
    {
      name: 'gate statement, unprepared',
      trips: 1,
      what: 'the same, parsed and planned every time',
      concurrency: 16,
      call: (i) => findKeyTakingToken(kxUnprepared, hashSecretKey(t(i).key)),
    },
    {
      name: 'what-if: gate in 1 statement',
      trips: 1,
      what: 'key lookup + bucket upsert as one CTE (replaces authenticate + takeToken)',
      concurrency: 16,
      call: (i) => gateOneStatement(kx, t(i).key),
    },
    {
      name: 'what-if: tx in 1 round trip + paginate()',
      trips: 3,
      what: 'BEGIN + set_config as one message, no knex transaction object',
      concurrency: 16,
      call: (i) => withTenantOneTrip(kx, t(i).id, (q) => page(q('entitlements'))),
    },
    {
      name: 'what-if: auth cached (hit)',
      trips: '0 (1 per key per 10 s)',
      what: 'authenticate() behind a 10 s in-process cache',
      concurrency: 16,
      call: (i) => authenticateCached(kx, t(i).key),
    },
    {
      name: 'requestContext(): request id + pino info line',
      trips: 0,
      what: 'the real middleware around a no-op, logging to /dev/null',
      concurrency: 1,
      call: () =>
        mw({ state: {}, set() {}, method: 'GET', path: '/v1/entitlements', status: 200 } as never, async () => {}),
    },
    {
      name: 'executeOperation() without DB work',
      trips: 0,
      what: 'scope check, body rules, zod parse of {limit: "50"}, audit skipped (reads)',
      concurrency: 1,
      call: (i) =>
        executeOperation(
          noDb,
          actorOf(i),
          { limit: '50' },
          { requestId: 'req_x', services, log: silent, surface: 'rest' },
        ),
    },
    {
      name: 'serializer, 50 rows',
      trips: 0,
      what: 'serializeEntitlement() over a page of rows (Date → ISO strings)',
      concurrency: 1,
      call: async () => rowsOnce.map(serializeEntitlement),
    },
  ];

  const pgPids = async () =>
    (
      await db.db.raw('select pid from pg_stat_activity where datname = ? and application_name = ?', [db.name, appName])
    ).rows.map((r: { pid: number }) => r.pid);

  return {
    pieces,
    async measure(p, seconds) {
      let i = 0;
      let calls = 0;
      const b0 = pidsCpu(await pgPids());
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const until = t0 + seconds * 1000;
      await Promise.all(
        Array.from({ length: p.concurrency }, async () => {
          while (performance.now() < until) {
            await p.call(i++);
            calls++;
          }
        }),
      );
      const wall = performance.now() - t0;
      const c = process.cpuUsage(c0);
      let pgMs = 0;
      for (const [pid, ms] of pidsCpu(await pgPids())) pgMs += ms - (b0.get(pid) ?? 0);
      return {
        calls,
        nodeUs: (c.user + c.system) / calls,
        pgUs: (pgMs * 1000) / calls,
        meanMs: (wall * p.concurrency) / calls,
      };
    },
    async close() {
      await Promise.all([kx.destroy(), kxUnprepared.destroy(), raw.end()]);
    },
  };
}
