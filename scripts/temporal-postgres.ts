/**
 * `npm run temporal:postgres`: Temporal's own server on PostgreSQL, the way a bigger
 * installation runs it (docs/scaling.md), on this machine. Builds `temporal-server` and
 * `temporal-sql-tool` into the per-user cache when missing, creates and upgrades the schemas
 * with the tool, registers the namespace and our search attributes, then serves until Ctrl-C.
 *
 *   npm run temporal:postgres -- [--port 7233] [--shards 4] [--layout one-process|per-service] [--database temporal]
 *
 * Postgres: DATABASE_URL (a role that may create databases), else the embedded one `npm start`
 * uses. Then run the api and worker(s) with TEMPORAL_ADDRESS=127.0.0.1:<port>.
 */
import path from 'node:path';
import { loadConfig } from '../runtime/config';
import { makeDataDirPrivate } from '../runtime/data-dir';
import { ensurePostgres } from '../runtime/postgres';
import { startPostgresTemporal, type ServiceLayout } from '../temporal/postgres-server';

const say = (m: string) => console.log(`[temporal:postgres] ${m}`);
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
};

const config = loadConfig();
const layout = arg('layout', 'one-process');
if (layout !== 'one-process' && layout !== 'per-service') throw new Error('--layout is one-process or per-service');
const shards = Number(arg('shards', '4'));
if (!Number.isInteger(shards) || shards < 1)
  throw new Error('--shards is a whole number ≥ 1 (and fixed once the schema exists)');

// The same data dir as `npm start`, owner-only the same way (runtime/data-dir.ts).
makeDataDirPrivate(config.dataDir);
const pg = await ensurePostgres(config, { port: config.embeddedPgPort, log: () => {} });
say(pg.embedded ? `embedded Postgres (${path.join(config.dataDir, 'postgres')})` : 'Postgres from DATABASE_URL');
const temporal = await startPostgresTemporal({
  databaseUrl: pg.url,
  database: arg('database', 'temporal'),
  numHistoryShards: shards,
  port: Number(arg('port', String(config.temporalDevPort))),
  layout: layout as ServiceLayout,
  namespace: config.temporalNamespace,
  dir: path.join(config.dataDir, 'temporal-postgres'),
  log: say,
});
say(
  `ready: TEMPORAL_ADDRESS=${temporal.address} TEMPORAL_NAMESPACE=${temporal.namespace} (logs in ${path.join(config.dataDir, 'temporal-postgres')})`,
);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  say('stopping…');
  await temporal.stop();
  await pg.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
for (const child of temporal.processes) {
  child.once('exit', (code) => {
    if (stopping) return;
    console.error(`[temporal:postgres] a server process exited (${code}); see the logs above`);
    void shutdown().then(() => process.exit(1));
  });
}
