import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import { freePort, waitForPort } from '../runtime/ports';
import { retryUntil } from '../runtime/deadline';
import { registerSearchAttributes } from './client';
import { SEARCH_ATTRIBUTES } from './search-attributes';
import { findTemporalServerBinaries, type ServerBinaries } from './server-binaries';

/**
 * Temporal's own server on PostgreSQL, as a bigger installation runs it (docs/scaling.md):
 * the schema set up and upgraded by the server's SQL tool, history sharded, and frontend,
 * history, matching and the internal worker either in one process or one process each. The
 * dev server (temporal/dev-server.ts) stays what `npm start` and the tests use by default.
 */
export type ServiceLayout = 'one-process' | 'per-service';
const SERVICES = ['frontend', 'history', 'matching', 'worker'] as const;

export interface PostgresTemporalOptions {
  /** A superuser-ish URL of the Postgres to hold Temporal's two databases (the database part is ignored). */
  databaseUrl: string;
  /** Temporal's databases: `<database>` and `<database>_visibility`. Default `temporal`. */
  database?: string;
  /** Fixed at schema setup: changing it later needs a new database. Default 4. */
  numHistoryShards?: number;
  /** Frontend gRPC port (what TEMPORAL_ADDRESS names). Default: a free port. */
  port?: number;
  layout?: ServiceLayout;
  /** The namespace the services use: registered, with our search attributes. */
  namespace?: string;
  /** Config, dynamic config and logs go here. */
  dir: string;
  /**
   * Connections per service to the main store (visibility: 2). In one process the four services
   * each hold a pool: about 3 × this at rest. Default 8; the test run passes less (a shared Postgres).
   */
  maxConns?: number;
  log?: (m: string) => void;
  binaries?: ServerBinaries;
}

export interface PostgresTemporalHandle {
  address: string;
  namespace: string;
  databases: { main: string; visibility: string };
  numHistoryShards: number;
  layout: ServiceLayout;
  /** One process, or one per service (frontend first). */
  processes: ChildProcess[];
  stop(): Promise<void>;
}

interface PgTarget {
  host: string;
  port: number;
  user: string;
  password: string;
}

function pgTarget(url: string): PgTarget {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  };
}

function sqlTool(bin: ServerBinaries, pg: PgTarget, database: string, args: string[]): string {
  return execFileSync(
    bin.sqlTool,
    [
      '--plugin',
      'postgres12',
      '--ep',
      pg.host,
      '--port',
      String(pg.port),
      '--user',
      pg.user,
      '--password',
      pg.password,
      '--db',
      database,
      ...args,
    ],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

/**
 * Create Temporal's two databases when missing and bring their schemas to the version this
 * server binary carries, with the server's own tool (its embedded schema; idempotent, so a
 * restart or an upgraded binary runs the same steps).
 */
export function setupSchemas(
  bin: ServerBinaries,
  databaseUrl: string,
  database: string,
  log?: (m: string) => void,
): void {
  const pg = pgTarget(databaseUrl);
  for (const [db, schema] of [
    [database, 'temporal'],
    [`${database}_visibility`, 'visibility'],
  ] as const) {
    try {
      sqlTool(bin, pg, db, ['create-database']);
    } catch (e) {
      if (!/already exists/i.test(String((e as { stderr?: string }).stderr ?? e))) throw e;
    }
    // setup-schema -v 0.0 only creates the version table (a no-op when present); update-schema
    // then applies every versioned step above the recorded version.
    sqlTool(bin, pg, db, ['setup-schema', '-v', '0.0']);
    sqlTool(bin, pg, db, ['update-schema', '--schema-name', `postgresql/v12/${schema}`]);
    log?.(`schema of ${db} up to date (postgresql/v12/${schema})`);
  }
}

/** Drop both databases (tests and benches that made their own). */
export function dropDatabases(bin: ServerBinaries, databaseUrl: string, database: string): void {
  const pg = pgTarget(databaseUrl);
  for (const db of [database, `${database}_visibility`]) sqlTool(bin, pg, db, ['drop-database', '--force']);
}

function serverConfig(o: {
  pg: PgTarget;
  database: string;
  shards: number;
  maxConns: number;
  ports: Record<string, number>;
  dynamicConfig: string;
}): string {
  const store = (db: string, conns: number) => `      sql:
        pluginName: "postgres12"
        databaseName: "${db}"
        connectAddr: "${o.pg.host}:${o.pg.port}"
        connectProtocol: "tcp"
        user: ${JSON.stringify(o.pg.user)}
        password: ${JSON.stringify(o.pg.password)}
        maxConns: ${conns}
        maxIdleConns: ${Math.ceil(conns / 2)}
        maxConnLifetime: "1h"`;
  const svc = (name: string) => `  ${name}:
    rpc:
      grpcPort: ${o.ports[`${name}Grpc`]}
      membershipPort: ${o.ports[`${name}Membership`]}
      bindOnLocalHost: true${name === 'frontend' ? `\n      httpPort: ${o.ports.frontendHttp}` : ''}`;
  // Adapted from the module's config/development-postgres12.yaml: ports of our choosing, no
  // metrics/pprof listeners, no archival.
  return `log:
  stdout: true
  level: warn

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: ${o.shards}
  datastores:
    postgres-default:
${store(o.database, o.maxConns)}
    postgres-visibility:
${store(`${o.database}_visibility`, 2)}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"

services:
${SERVICES.map(svc).join('\n')}

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${o.ports.frontendGrpc}"

dcRedirectionPolicy:
  policy: "noop"

dynamicConfigClient:
  filepath: ${JSON.stringify(o.dynamicConfig)}
  pollInterval: "10s"
`;
}

/** What differs from the server's defaults, and why. */
const DYNAMIC_CONFIG = `# Search attributes registered a moment ago are visible at once (as on the dev server).
system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
# Workflow ids carry the tenant and the provider's ids (docs/temporal.md, "Identity rules").
limit.maxIDLength:
  - value: 1000
frontend.enableUpdateWorkflowExecution:
  - value: true
`;

/**
 * Register `namespace` (1 day of retention after close, as the dev server) and our search
 * attributes, then wait until the frontend serves both: a new namespace reaches the frontend's
 * registry on its next refresh.
 */
export async function ensureNamespace(address: string, namespace: string, timeoutMs = 120_000): Promise<void> {
  await retryUntil(timeoutMs, 1000, async () => {
    const connection = await Connection.connect({ address });
    try {
      try {
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: msToTs('1 day'),
        });
      } catch (err) {
        if (!/already exists|already registered/i.test(String((err as Error).message))) throw err;
      }
      await registerSearchAttributes(connection, namespace);
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      const missing = SEARCH_ATTRIBUTES.filter((a) => !customAttributes?.[a.name]);
      if (missing.length)
        throw new Error(`search attributes not yet visible: ${missing.map((a) => a.name).join(', ')}`);
      // A call that goes through the frontend's namespace registry (describe reads the database).
      await connection.workflowService.countWorkflowExecutions({ namespace, query: '' });
    } finally {
      await connection.close();
    }
  });
}

export async function startPostgresTemporal(opts: PostgresTemporalOptions): Promise<PostgresTemporalHandle> {
  const log = opts.log ?? (() => {});
  const bin = opts.binaries ?? findTemporalServerBinaries({ log });
  const database = opts.database ?? 'temporal';
  const shards = opts.numHistoryShards ?? 4;
  const layout = opts.layout ?? 'one-process';
  const namespace = opts.namespace ?? 'default';
  fs.mkdirSync(opts.dir, { recursive: true });
  setupSchemas(bin, opts.databaseUrl, database, log);

  const ports: Record<string, number> = {
    frontendGrpc: opts.port ?? (await freePort()),
    frontendHttp: await freePort(),
  };
  for (const s of SERVICES) {
    ports[`${s}Grpc`] ??= await freePort();
    ports[`${s}Membership`] = await freePort();
  }
  const dynamicConfig = path.join(opts.dir, 'dynamic-config.yaml');
  fs.writeFileSync(dynamicConfig, DYNAMIC_CONFIG);
  // The server reads <root>/<config dir>/<env>.yaml (it has no single-file flag).
  fs.mkdirSync(path.join(opts.dir, 'config'), { recursive: true });
  const configFile = path.join(opts.dir, 'config', 'development.yaml');
  fs.writeFileSync(
    configFile,
    serverConfig({
      pg: pgTarget(opts.databaseUrl),
      database,
      shards,
      maxConns: opts.maxConns ?? 8,
      ports,
      dynamicConfig,
    }),
    { mode: 0o600 },
  );

  // Per service: history and matching first (they need no one), then the frontend, then the
  // internal worker (a client of the frontend).
  const groups: (readonly string[])[] =
    layout === 'one-process' ? [SERVICES] : ['history', 'matching', 'frontend', 'worker'].map((s) => [s]);
  const processes: ChildProcess[] = [];
  const stop = async () => {
    // Frontend last in, first out: the others keep serving until it is gone.
    await Promise.all(
      processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
  };
  try {
    const exits: Promise<never>[] = [];
    for (const services of groups) {
      // One at a time, each up before the next: on a fresh database every process writes the
      // cluster's metadata at start, and processes starting together collide on it.
      if (exits.length)
        await Promise.race([waitForPort('127.0.0.1', ports[`${groups[exits.length - 1][0]}Grpc`], 120_000), ...exits]);
      const logFile = path.join(opts.dir, `temporal-${services.length > 1 ? 'server' : services[0]}.log`);
      const out = fs.openSync(logFile, 'a');
      const child = spawn(
        bin.server,
        [
          '--root',
          opts.dir,
          '--config',
          'config',
          '--env',
          'development',
          '--allow-no-auth',
          'start',
          ...services.flatMap((s) => ['--service', s]),
        ],
        {
          stdio: ['ignore', out, out],
        },
      );
      fs.closeSync(out);
      processes.push(child);
      const exited = new Promise<never>((_, reject) =>
        child.once('exit', (code) =>
          reject(new Error(`temporal-server (${services.join(', ')}) exited early (code ${code}); see ${logFile}`)),
        ),
      );
      exited.catch(() => {});
      exits.push(exited);
    }
    const address = `127.0.0.1:${ports.frontendGrpc}`;
    await Promise.race([waitForPort('127.0.0.1', ports.frontendGrpc, 120_000), ...exits]);
    await Promise.race([ensureNamespace(address, namespace), ...exits]);
    log(
      `Temporal server on PostgreSQL at ${address} (${shards} history shards, ${layout}, databases ${database} and ${database}_visibility)`,
    );
    return {
      address,
      namespace,
      databases: { main: database, visibility: `${database}_visibility` },
      numHistoryShards: shards,
      layout,
      processes,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
