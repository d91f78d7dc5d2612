import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { PROVIDERS } from '../domain/providers';
import { ConfigError, ROOT_DIR, loadConfig } from '../runtime/config';
import { SERVICE_NODE_FLAGS } from '../runtime/node-flags';
import { makeDataDirPrivate } from '../runtime/data-dir';
import { openDatabase } from '../db/open-database';
import { resolveMasterKey } from '../vault/master-key';
import { startDevServer, type DevServerHandle } from '../temporal/dev-server';
import { isPortOpen, waitForPort } from '../runtime/ports';
import { ensureSearchAttributes } from '../temporal/client';
import { ensureDemoTenant } from '../seed/demo';
import { reuseOrMintDemoKey } from '../seed/demo-key';
import { ensureDemoLogin } from '../seed/demo-login';
import { registerDemoWebhooks } from '../seed/demo-webhooks';
import { demoCanSell, syncDemoCatalogue } from '../seed/demo-sync';
import { sdkInstallCommand } from '../api/dashboard/sdk-files';
import { ensureSdkBuilt } from './sdk-build';
import { DEMO_HISTORY_ACTION, ensureDemoHistory } from './demo-history';
import { demoHistoryDone } from '../db/demo-facts';
import { withTenant } from '../db/tenant-tx';

/**
 * `npm start`: everything on embedded defaults — Postgres, the Temporal dev server (with UI),
 * the five provider emulators, the two workers (inbound; outbound webhooks) and the three
 * listeners — then the demo tenant, ready to sell: its webhook URLs registered at the
 * emulators and, on the first start, its catalogue synced to them in the background, and its
 * dashboard login. Ctrl-C, or SIGTERM to this process alone, stops every child. `npm start` runs
 * this file as `exec node --import tsx …`: npm passes a SIGTERM to its one child, so that child is
 * this process (not `sh -c`, which dies of it and leaves its child running, nor tsx's wrapper,
 * which may SIGKILL a child that has not confirmed the signal within 30 ms).
 */
const say = (m: string) => console.log(`[start] ${m}`);
const children: { name: string; proc: ChildProcess }[] = [];
let temporal: DevServerHandle | undefined;
let temporalStarting: Promise<DevServerHandle> | undefined;
let closeDb: (() => Promise<void>) | undefined;
let stopping = false;
// Ends the demo's background sync when we stop, so it reports nothing after "stopping…".
const stopped = new AbortController();

async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    stopped.abort();
    say('stopping…');
    await Promise.all(children.map(({ proc }) => stopChild(proc, 8000)));
    // A signal during startup may come while the dev server is still starting: it is stopped too.
    const server = temporal ?? (await temporalStarting?.catch(() => undefined));
    await server?.stop();
    await closeDb?.();
  }
  process.exit(code);
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves when it has exited. */
function stopChild(proc: ChildProcess, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode) return resolve();
    const escalate = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => {
      clearTimeout(escalate);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

function child(name: string, script: string, env: NodeJS.ProcessEnv): void {
  if (stopping) return; // a signal came while starting: start nothing more
  const logFile = fs.openSync(path.join(config.dataDir, `${name}.log`), 'a', 0o600);
  const proc = spawn(process.execPath, [...SERVICE_NODE_FLAGS, '--import', 'tsx', path.join(ROOT_DIR, script)], {
    cwd: ROOT_DIR,
    env: { ...process.env, ...env },
    stdio: ['ignore', logFile, logFile],
  });
  proc.once('exit', (code, signal) => {
    // A terminal Ctrl-C reaches the children too; give our own SIGINT handler a moment to
    // mark the shutdown as intended before treating this exit as a crash.
    setTimeout(() => {
      if (stopping) return;
      console.error(`[start] ${name} exited (${signal ?? code}); see ${path.join(config.dataDir, `${name}.log`)}`);
      void shutdown(1);
    }, 300);
  });
  children.push({ name, proc });
}

/**
 * Ctrl-C in a terminal reaches every process of the group; a process manager's stop (SIGTERM) or
 * `kill <pid>` reaches this process alone (or `npm start`, which passes it here). Either way this
 * process stops every child it started, escalating to SIGKILL, before it exits.
 */
const onSignal = () => void shutdown(0);
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
for (const sig of SIGNALS) process.on(sig, onSignal);
// The last resort when this process ends any other way (a crash): nothing it started outlives it.
process.once('exit', () => {
  for (const { proc } of children) if (proc.exitCode === null && !proc.signalCode) proc.kill('SIGKILL');
  temporal?.process.kill('SIGKILL');
});

let config: ReturnType<typeof loadConfig>;
let masterKey: string;
try {
  // Production requirements (MASTER_KEY, STORE_ANDROID_PUSH_SERVICE_ACCOUNT) are named here, before anything starts.
  config = loadConfig(process.env, { localStart: true });
  // Keys, logs, databases and emulator state are the owner's alone: the data dir, an earlier release's
  // 0755/0644 tree included, before anything writes there; what is created later is made 0600 as it is
  // created (runtime/data-dir.ts).
  makeDataDirPrivate(config.dataDir);
  masterKey = resolveMasterKey(config, say);
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(`[start] ${e.message}`);
    process.exit(1);
  }
  throw e;
}

say(
  config.databaseUrl
    ? 'Postgres: DATABASE_URL'
    : `Postgres: embedded, data in ${path.join(config.dataDir, 'postgres')}`,
);
// As the owner: migrations, the login role, and the demo tenant below. The api and worker get only
// the login role's URL (APP_DATABASE_URL), never the owner's.
const database = await openDatabase(config, { pool: { max: 3 }, as: 'owner' });
closeDb = database.close;
// The embedded Postgres package installs its own signal handlers, which stop the database and end
// the process at once, before the children using it are stopped (and leave the Temporal dev
// server running). The shutdown above stops the database last, so only its handlers stay.
for (const sig of SIGNALS) for (const l of process.listeners(sig)) if (l !== onSignal) process.removeListener(sig, l);

let temporalAddress = config.temporalAddress;
let temporalUi: string | undefined;
if (temporalAddress) {
  await ensureSearchAttributes(temporalAddress, config.temporalNamespace);
  say(`Temporal: ${temporalAddress}`);
} else if (await isPortOpen('127.0.0.1', config.temporalDevPort)) {
  temporalAddress = `127.0.0.1:${config.temporalDevPort}`;
  temporalUi = `http://127.0.0.1:${config.temporalUiPort}`;
  await ensureSearchAttributes(temporalAddress, config.temporalNamespace);
  say(`Temporal: reusing the server already on ${temporalAddress}`);
} else {
  say(`Temporal: starting the dev server (state in ${path.join(config.dataDir, 'temporal.db')})`);
  temporalStarting = startDevServer({
    port: config.temporalDevPort,
    uiPort: config.temporalUiPort,
    dbFile: path.join(config.dataDir, 'temporal.db'),
    logFile: path.join(config.dataDir, 'temporal.log'),
    log: say,
    // The engine yields the CPU to the api, which makes the buyer premium (runtime/process-priority.ts).
    nice: config.engineNice,
  });
  temporal = await temporalStarting;
  temporalAddress = temporal.address;
  temporalUi = temporal.uiUrl;
}

const env = {
  DATABASE_URL: '',
  APP_DATABASE_URL: database.appUrl,
  TEMPORAL_ADDRESS: temporalAddress,
  MASTER_KEY: masterKey,
  DATA_DIR: config.dataDir,
  // Resolved here (unset means allowed under npm start outside production), so every child agrees.
  OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: config.outboundWebhooks.allowPrivateAddresses ? '1' : '0',
};
if (!(await isPortOpen('127.0.0.1', config.emulatorPorts.psp_a))) child('emulators', 'emulators/main.ts', env);
// All serve metrics on loopback; on one machine the workers take the next ports (METRICS_PORT + 1, + 2).
const metricsPort = (offset: number) => String(config.metricsPort ? config.metricsPort + offset : 0);
child('worker', 'temporal/worker-main.ts', { ...env, METRICS_PORT: metricsPort(1) });
// The worker yields the CPU to the api (ENGINE_NICE); outbound webhook deliveries, in their own task queue and process,
// yield to both (runtime/process-priority.ts, docs/outbound-webhooks.md).
child('outbound-worker', 'temporal/outbound-worker-main.ts', { ...env, METRICS_PORT: metricsPort(2) });
// psp_b and psp_c accounts are claimed by OAuth only (docs/providers.md, "Proving an account"); the
// emulators serve consent pages, so the dashboard gets a platform client for each emulator it talks
// to and a tenant signed up here connects them as it would the real providers. Not for a provider
// whose base URL or OAuth client is configured.
const emulatorOAuth: NodeJS.ProcessEnv = {};
for (const [provider, clientId] of [
  ['psp_b', 'billing_local'],
  ['psp_c', 'billinglocal'],
] as const) {
  if (
    config.oauthClients[provider] ||
    config.providerBaseUrls[provider] !== `http://127.0.0.1:${config.emulatorPorts[provider]}`
  )
    continue;
  emulatorOAuth[`${provider.toUpperCase()}_OAUTH_CLIENT_ID`] = clientId;
  emulatorOAuth[`${provider.toUpperCase()}_OAUTH_CLIENT_SECRET`] = 'local-emulator-only';
}
ensureSdkBuilt(say); // before the api reads it: its dashboard host serves it
child('api', 'api/main.ts', { ...env, ...emulatorOAuth });

await Promise.all([
  ...[config.apiPort, config.dashboardPort, config.toolsPort].map((p) => waitForPort('127.0.0.1', p, 120_000)),
  ...PROVIDERS.map((p) => waitForPort('127.0.0.1', config.emulatorPorts[p], 120_000)),
]);

// Which processes this start owns, so operators (and the start/stop test) can check them.
const owned: Record<string, number | undefined> = Object.fromEntries(children.map((c) => [c.name, c.proc.pid]));
owned.temporal = temporal?.process.pid;
const pgPid = path.join(config.dataDir, 'postgres', 'postmaster.pid');
if (!config.databaseUrl && fs.existsSync(pgPid)) owned.postgres = Number(fs.readFileSync(pgPid, 'utf8').split('\n')[0]);
fs.writeFileSync(path.join(config.dataDir, 'processes.json'), JSON.stringify(owned), { mode: 0o600 });

const demo = await ensureDemoTenant(database.db, { ...config, masterKey }, { mintKey: false });
const secretKey = await reuseOrMintDemoKey(database.db, config.dataDir, demo.tenant_id);
const login = await ensureDemoLogin(database.db, config, demo.tenant_id);
// Where the emulators' hosted checkouts deliver their events (a tenant sets this in Stripe's
// dashboard). Each start: a start on other ports needs its own URL there.
const webhooksAt = await registerDemoWebhooks(database.db, config, demo.tenant_id, say);
const needsSync = !(await demoCanSell(database.db, demo.tenant_id));
const needsHistory =
  config.env !== 'production' &&
  !(await withTenant(database.db, demo.tenant_id, (trx) => demoHistoryDone(trx, DEMO_HISTORY_ACTION)));

const line = '─'.repeat(64);
console.log(`\n${line}
 Billing service is up
   API            http://127.0.0.1:${config.apiPort}/v1     (OpenAPI: /v1/openapi.json)
   Dashboard      http://127.0.0.1:${config.dashboardPort}/        (alt API: /v1, webhooks: /api/webhooks/<provider>)
   Tool server    http://127.0.0.1:${config.toolsPort}/        (JSON-RPC 2.0 / MCP, POST; an assistant given this URL signs in on the dashboard's consent page)
   Temporal UI    ${temporalUi ?? '(external cluster: ' + temporalAddress + ')'}
   Emulators      ${PROVIDERS.map((p) => `${p}:${config.emulatorPorts[p]}`).join('  ')}

 Demo tenant      ${demo.tenant_id}
 Secret key       ${secretKey}
 Publishable key  ${demo.publishable_key}
${
  login
    ? ` Dashboard login  http://127.0.0.1:${config.dashboardPort}/login
   Email          ${login.email}
   Password       ${login.password}   (generated once, kept in ${path.join(config.dataDir, 'demo-login.json')})
`
    : ''
}
 SDK              ${sdkInstallCommand(config.publicDashboardUrl) ?? '(not built: npm run sdk:build, then start again)'}
 RevenueCat SDKs  proxyURL ${config.publicApiUrl}/revenuecat   (a key: Dashboard → Developer API → Create RevenueCat key)

 Webhook URLs     registered at ${webhooksAt.length ? webhooksAt.join(', ') : '(no emulator with a webhook-endpoint route answered)'}
 Demo history     ${needsHistory ? 'a year of generated buyers, being written in the background (a line follows when it is done)' : 'a year of buyers: every chart has figures'}
 Demo catalogue   ${needsSync ? 'syncing to the emulators in the background (a line follows when it is done)' : 'synced: the example can sell'}
 Outbound webhooks ${
   config.outboundWebhooks.allowPrivateAddresses
     ? 'may go to loopback and private addresses (a backend on this machine); OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES=0 refuses them'
     : 'go to public addresses only (OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES)'
 }

 Try: curl -H "Authorization: Bearer ${secretKey}" http://127.0.0.1:${config.apiPort}/v1/products
      npm run example:web   (the example web app on the demo tenant: Subscribe, Pay, premium)
 Logs in ${config.dataDir}/*.log · Ctrl-C stops everything
${line}\n`);

if (needsHistory) {
  // In the background, after the banner: the service is usable meanwhile, and the charts fill as it goes.
  const began = Date.now();
  void ensureDemoHistory(database.db, config, demo.tenant_id, { say, signal: stopped.signal })
    .then((r) => {
      if (!stopping && r === 'made') say(`Demo history written (${((Date.now() - began) / 1000).toFixed(1)} s)`);
    })
    .catch((err: Error) => {
      if (!stopping) say(`Demo history failed: ${err.message}; the next \`npm start\` finishes it`);
    });
}

if (needsSync) {
  // In the background: the service is usable meanwhile, and example:web waits for it.
  void syncDemoCatalogue({
    db: database.db,
    tenantId: demo.tenant_id,
    apiRoot: `http://127.0.0.1:${config.apiPort}/v1`,
    secretKey,
    signal: stopped.signal,
  })
    .catch((err: Error) => ({
      ok: false,
      line: `Demo catalogue sync failed: ${err.message}; retry: Ctrl-C, then \`npm start\` again`,
    }))
    .then((r) => {
      if (!stopping) say(r.line);
    });
}
