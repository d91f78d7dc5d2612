import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../domain/config-error';
import { PROVIDERS, type ProviderId } from '../domain/providers';
import { DEFAULT_LIMITS, type Limits } from '../domain/login-limits';
import { DEFAULT_HTTP_LIMITS, perAddressShare, type HttpLimits } from './http-limits';
import { DEFAULT_OUTBOUND_PORTS, parsePortRanges, type PortRange } from '../domain/outbound-ports';
import { PROVISIONAL_DEFAULT_SECONDS } from '../domain/provisional';
import { PRIORITY } from './process-priority';

/**
 * Repository root, resolved from this file so scripts work from any cwd (and from the compiled dist/runtime/config.js).
 */
const PARENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT_DIR = path.basename(PARENT_DIR) === 'dist' ? path.dirname(PARENT_DIR) : PARENT_DIR;

export type { ProviderId } from '../domain/providers';

/** Emulator ports follow the provider order (domain/providers.ts): 4101..4105 (docs/emulators.md). */
export const DEFAULT_EMULATOR_PORTS: Record<ProviderId, number> = {
  psp_a: 4101,
  psp_b: 4102,
  psp_c: 4103,
  store_android: 4104,
  store_ios: 4105,
};

function intEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new ConfigError(name, `${name} must be a port number, got "${raw}"`);
  }
  return n;
}

/** A positive whole number of seconds, at most 30 days. */
function expirySecondsEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 30 * 86400) {
    throw new ConfigError(name, `${name} must be a whole number of seconds from 1 to ${30 * 86400}, got "${raw}"`);
  }
  return n;
}

export { ConfigError } from '../domain/config-error';

export interface Config {
  env: 'development' | 'production' | 'test';
  dataDir: string;
  apiPort: number;
  dashboardPort: number;
  toolsPort: number;
  /** `DATABASE_URL`: the owner's (or a superuser's) URL, which runs migrations; unset, the embedded server. */
  databaseUrl?: string;
  /**
   * `APP_DATABASE_URL`: the login role the api and worker connect as (not a superuser, owns
   * nothing; db/login-role.ts). Unset, they connect as `billing_api`, provisioned from DATABASE_URL.
   */
  appDatabaseUrl?: string;
  temporalAddress?: string;
  temporalNamespace: string;
  taskQueue: string;
  /** Ports of the local dev server `npm start` runs when TEMPORAL_ADDRESS is not set. */
  temporalDevPort: number;
  temporalUiPort: number;
  masterKey?: string;
  /**
   * Temporal payloads read besides ciphertext bound to its workflow: TEMPORAL_ALLOW_PLAINTEXT_PAYLOADS=1,
   * TEMPORAL_ALLOW_UNBOUND_PAYLOADS=1, for upgrades (docs/temporal.md, "Upgrading").
   */
  temporalPayloads: { allowPlaintext: boolean; allowUnbound: boolean };
  logLevel: string;
  emulatorPorts: Record<ProviderId, number>;
  /** Where each provider adapter sends its API calls (the emulators by default). */
  providerBaseUrls: Record<ProviderId, string>;
  /** Public base URL of the dashboard host, used to build webhook URLs and the OAuth redirect_uri. */
  publicDashboardUrl: string;
  /**
   * How long a write held for a person's approval waits before it expires
   * (`APPROVAL_EXPIRY_SECONDS`, default a day; docs/approvals.md).
   */
  approvalExpirySeconds?: number;
  /**
   * How long provisional access counts unless the workflow confirms it first (`PROVISIONAL_ACCESS_SECONDS`, default
   * 15 minutes; docs/provisional-access.md).
   */
  provisionalAccessSeconds: number;
  /** Public base URL of the API host (`PUBLIC_API_URL`): the SDK's `backend` in the dashboard's snippet. */
  publicApiUrl: string;
  /**
   * Public URL of the tool server (`PUBLIC_TOOLS_URL`): the resource an assistant's token is bound
   * to, and what its protected-resource metadata names (docs/assistant-sign-in.md).
   */
  publicToolsUrl: string;
  /**
   * Reverse proxies whose X-Forwarded-For / X-Forwarded-Proto / X-Forwarded-Host are believed
   * (`TRUSTED_PROXIES`, comma-separated addresses or CIDR ranges). Empty: nobody's are, and the
   * client is the TCP peer. See api/client-address.ts.
   */
  trustedProxies: string[];
  /** Login and sign-up limits (db/login-attempts.ts); `SIGNUPS_PER_ADDRESS_PER_HOUR` sets the sign-up one. */
  dashboardLimits: Limits;
  /**
   * Per-listener timeouts and connection caps: HTTP_REQUEST_TIMEOUT_MS, HTTP_HEADERS_TIMEOUT_MS,
   * HTTP_KEEP_ALIVE_TIMEOUT_MS, HTTP_MAX_CONNECTIONS, HTTP_MAX_CONNECTIONS_PER_ADDRESS.
   */
  httpLimits: HttpLimits;
  /**
   * The service account of the Play RTDN Pub/Sub push subscription
   * (`STORE_ANDROID_PUSH_SERVICE_ACCOUNT`): a push token must name it. Without it any
   * Google-issued token with the right audience would do, so production refuses to start.
   */
  storeAndroidPushServiceAccount?: string;
  /**
   * `STORE_ANDROID_JWKS_URL`: where Google's OIDC signing keys are read (default: Google's, or the emulator's when the
   * Play base is local).
   */
  storeAndroidJwksUrl?: string;
  /**
   * `STORE_IOS_TRUSTED_ROOTS`: comma-separated PEM/DER files of the App Store roots to trust (default: Apple's, or the
   * emulator's when local).
   */
  storeIosTrustedRoots?: string[];
  /**
   * The platform's OAuth client per web provider (<PROVIDER>_OAUTH_CLIENT_ID / _SECRET): the
   * dashboard's "Connect" button needs one; without it the provider is connected by entering keys.
   */
  oauthClients: Partial<Record<ProviderId, { client_id: string; client_secret: string }>>;
  /**
   * Browser origins the tool server accepts besides loopback ones (`TOOLS_ALLOWED_ORIGINS`,
   * comma-separated, e.g. `https://assistant.example.com`). MCP clients send no Origin at all.
   */
  toolsAllowedOrigins: string[];
  /**
   * The address the HTTP listeners and the emulators bind (`BIND_HOST`): loopback unless a container publishes them.
   */
  bindHost: string;
  /** Port of the embedded Postgres when DATABASE_URL is not set (`EMBEDDED_PG_PORT`). */
  embeddedPgPort: number;
  /** `npm run emulators` with EMULATOR_RATE_LIMITS=1: each emulator enforces its provider's documented limit. */
  emulatorRateLimits: boolean;
  /** Where the Temporal CLI is looked for (temporal/binary.ts). */
  tools: ToolPaths;
  /**
   * `WORKFLOW_BUNDLE_PATH`: a workflow bundle already made from these sources (bundleWorkflowCode),
   * loaded by a worker started from sources instead of bundling `workflows/` itself; unset, it
   * bundles at start as before. The tests set it to their run's bundle (docs/testing.md).
   */
  workflowBundlePath?: string;
  /**
   * `ENGINE_NICE`: the CPU priority (nice, 0–19) of the inbound worker and the dev server `npm start`
   * runs, below the api's (runtime/process-priority.ts). 10 by default; 0 under test, where test files
   * share two cores and a worker yielding to its neighbours would make each file's wait on its own
   * worker depend on them.
   */
  engineNice: number;
  /**
   * `TENANT_SCHEDULES_AT_START` (`1` by default, `0` = off): whether the api process, as it starts,
   * ensures every tenant's reconciliation schedules and Voided Purchases sweeps on its task queue.
   * With many api replicas, one is enough; connections proven and settings changed ensure them anyway.
   */
  tenantSchedulesAtStart: boolean;
  /**
   * `METRICS_PORT`: the loopback Prometheus listener of the api and the worker (9464; 0 = none; none by default under
   * NODE_ENV=test).
   */
  metricsPort: number;
  /** `OUTBOX_MAX_AGE_SECONDS`: /readyz fails when the webhook outbox's oldest row is older (900; 0 = no check). */
  outboxMaxAgeSeconds: number;
  /**
   * Traces over OTLP/HTTP (JSON) when the standard OTEL_* variables ask for them; off by default (runtime/tracing.ts).
   */
  tracing: TracingConfig | null;
  /** Outbound webhooks to tenants (docs/outbound-webhooks.md). */
  outboundWebhooks: OutboundWebhookConfig;
  /**
   * `EXPORT_DESTINATIONS_ALLOW_PRIVATE_ADDRESSES`: `1` lets scheduled exports upload to a tenant's
   * storage endpoint at a private, loopback or link-local address (an object store on the operator's
   * own network, the tests' local one), `0` or unset refuses it: the endpoint is the tenant's to set.
   */
  exportDestinations: { allowPrivateAddresses: boolean };
  /**
   * The inbound worker's task slots, set explicitly (docs/limits.md, "The worker"): activities
   * (WORKER_MAX_ACTIVITIES, 100), workflow tasks (WORKER_MAX_WORKFLOW_TASKS, 40) and local
   * activities (WORKER_MAX_LOCAL_ACTIVITIES, 100) it runs at once. One tenant's imports and
   * reconciliations hold at most WORK_TURNS_PER_TENANT of the activity slots.
   */
  workerSlots: { activities: number; workflowTasks: number; localActivities: number };
}

export interface OutboundWebhookConfig {
  /**
   * `OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES`: `1` delivers to private, loopback and link-local
   * addresses too, `0` refuses them. Unset: allowed under `npm start` outside production (a developer
   * points an endpoint at a backend on their own machine), refused otherwise: tenant-supplied URLs
   * are fetched from the worker, inside the operator's network.
   */
  allowPrivateAddresses: boolean;
  /** `OUTBOUND_WEBHOOK_TIMEOUT_MS`: one attempt's limit (connect, send, answer), default 10 s. */
  attemptTimeoutMs: number;
  /** `OUTBOUND_WEBHOOK_FIRST_RETRY_MS`: the first back-off (default 5 s), doubling up to 2 h. */
  firstRetryMs: number;
  /** `OUTBOUND_WEBHOOK_RETRY_WINDOW_MS`: how long a delivery is retried before it fails (default 3 days). */
  retryWindowMs: number;
  /**
   * `OUTBOUND_WEBHOOK_ALLOWED_PORTS`: the ports an endpoint's URL may name, comma-separated ports
   * and ranges (default `80,443,1024-65535`; domain/outbound-ports.ts). Checked at save and at send.
   */
  allowedPorts: PortRange[];
  /**
   * `OUTBOUND_WEBHOOK_MAX_ATTEMPTS_PER_SECOND`: POSTs one outbound worker process starts per
   * second at most, over every tenant (default 100): a backlog drains at this pace instead of
   * as fast as Postgres and the receivers allow, beside the inbound path.
   */
  maxAttemptsPerSecond: number;
  /**
   * `OUTBOUND_WEBHOOK_MAX_DRAINS`: drains one outbound worker process runs at once (its Temporal
   * activity slots; default 32). One tenant holds at most MAX_ACTIVE_DRAINS_PER_TENANT of them.
   */
  maxDrains: number;
  /**
   * `OUTBOUND_WEBHOOK_DRAIN_RETRY_MS`: the first pause between the tries of a drain that fails
   * (default 1000, doubling; 5 tries). The tests shorten it.
   */
  drainRetryMs: number;
}

export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  /** OTEL_SERVICE_NAME; unset, each process names itself (billing-api, billing-worker). */
  serviceName?: string;
}

/**
 * The standard OpenTelemetry variables, read here like every other: traces are on when
 * OTEL_TRACES_EXPORTER=otlp or an OTLP endpoint is set, and off when OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none. The exporter speaks OTLP over HTTP with JSON bodies (what
 * @opentelemetry/exporter-trace-otlp-http sends); other protocols are refused by name.
 */
function tracingConfig(env: NodeJS.ProcessEnv): TracingConfig | null {
  const exporter = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase();
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || exporter === 'none') return null;
  if (exporter && exporter !== 'otlp')
    throw new ConfigError('OTEL_TRACES_EXPORTER', `OTEL_TRACES_EXPORTER supports "otlp" or "none", got "${exporter}"`);
  if (!exporter && !endpoint) return null;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol && protocol !== 'http/json') {
    throw new ConfigError(
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      `traces are exported as OTLP over HTTP with JSON bodies: set OTEL_EXPORTER_OTLP_PROTOCOL=http/json (or leave it unset), got "${protocol}"`,
    );
  }
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
    `${(env.OTEL_EXPORTER_OTLP_ENDPOINT || 'http://localhost:4318').replace(/\/$/, '')}/v1/traces`;
  return { url, serviceName: env.OTEL_SERVICE_NAME || undefined };
}

/** Where the dev tooling lives: `TEMPORAL_CLI` (an explicit binary) and the per-user cache under `XDG_CACHE_HOME`. */
export interface ToolPaths {
  temporalCli?: string;
  /** Per-user cache shared by every clone on the machine (CI's fresh clone included). */
  toolCacheDir: string;
}

/**
 * The tooling part of the configuration on its own: the test run's global setup and the dev
 * server find the Temporal CLI before (and without) a full configuration, which would also
 * validate everything the service needs.
 */
export function toolPaths(env: NodeJS.ProcessEnv = process.env): ToolPaths {
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return { temporalCli: env.TEMPORAL_CLI || undefined, toolCacheDir: path.join(base, 'billing-tools', 'bin') };
}

/** Where the embedded Postgres listens unless EMBEDDED_PG_PORT says otherwise. */
export const DEFAULT_EMBEDDED_PG_PORT = 54329;

/**
 * The log level before any configuration: the module-level logger (runtime/logger.ts) exists as
 * soon as it is imported, and a configuration error itself is logged through it, so its level
 * cannot wait for loadConfig. Code that holds a Config uses `config.logLevel` instead.
 */
export function bootstrapLogLevel(env: NodeJS.ProcessEnv = process.env): string {
  return env.LOG_LEVEL || 'info';
}

/**
 * The configuration from the environment. `localStart`: the caller is `npm start` (scripts/start.ts),
 * a developer's own machine, where some defaults differ outside production (each names it).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, opts: { localStart?: boolean } = {}): Config {
  const nodeEnv = env.NODE_ENV === 'production' ? 'production' : env.NODE_ENV === 'test' ? 'test' : 'development';
  const emulatorPorts = { ...DEFAULT_EMULATOR_PORTS };
  for (const p of PROVIDERS) {
    emulatorPorts[p] = intEnv(env, `${p.toUpperCase()}_EMULATOR_PORT`, DEFAULT_EMULATOR_PORTS[p]);
  }
  const providerBaseUrls = {} as Record<ProviderId, string>;
  for (const p of PROVIDERS) {
    providerBaseUrls[p] = env[`${p.toUpperCase()}_API_BASE`] || `http://127.0.0.1:${emulatorPorts[p]}`;
  }
  const dashboardPort = intEnv(env, 'DASHBOARD_PORT', 4001);
  if (nodeEnv === 'production') requireForProduction(env);
  return {
    env: nodeEnv,
    dataDir: env.DATA_DIR ? path.resolve(env.DATA_DIR) : path.join(ROOT_DIR, '.data'),
    apiPort: intEnv(env, 'API_PORT', 4000),
    dashboardPort,
    toolsPort: intEnv(env, 'TOOLS_PORT', 4002),
    databaseUrl: env.DATABASE_URL || undefined,
    appDatabaseUrl: env.APP_DATABASE_URL || undefined,
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'billing',
    temporalDevPort: intEnv(env, 'TEMPORAL_PORT', 7233),
    temporalUiPort: intEnv(env, 'TEMPORAL_UI_PORT', 8233),
    masterKey: env.MASTER_KEY || undefined,
    temporalPayloads: {
      allowPlaintext: env.TEMPORAL_ALLOW_PLAINTEXT_PAYLOADS === '1',
      allowUnbound: env.TEMPORAL_ALLOW_UNBOUND_PAYLOADS === '1',
    },
    logLevel: env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info'),
    emulatorPorts,
    providerBaseUrls,
    publicDashboardUrl: (env.PUBLIC_DASHBOARD_URL || `http://127.0.0.1:${dashboardPort}`).replace(/\/$/, ''),
    approvalExpirySeconds: expirySecondsEnv(env, 'APPROVAL_EXPIRY_SECONDS', 24 * 3600),
    provisionalAccessSeconds: expirySecondsEnv(env, 'PROVISIONAL_ACCESS_SECONDS', PROVISIONAL_DEFAULT_SECONDS),
    publicApiUrl: (env.PUBLIC_API_URL || `http://127.0.0.1:${intEnv(env, 'API_PORT', 4000)}`).replace(/\/$/, ''),
    publicToolsUrl: (env.PUBLIC_TOOLS_URL || `http://127.0.0.1:${intEnv(env, 'TOOLS_PORT', 4002)}`).replace(/\/$/, ''),
    trustedProxies: (env.TRUSTED_PROXIES ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
    storeAndroidPushServiceAccount: env.STORE_ANDROID_PUSH_SERVICE_ACCOUNT || undefined,
    storeAndroidJwksUrl: env.STORE_ANDROID_JWKS_URL || undefined,
    storeIosTrustedRoots: env.STORE_IOS_TRUSTED_ROOTS
      ? env.STORE_IOS_TRUSTED_ROOTS.split(',')
          .map((f) => f.trim())
          .filter(Boolean)
      : undefined,
    httpLimits: httpLimits(env),
    dashboardLimits: {
      ...DEFAULT_LIMITS,
      // Under NODE_ENV=test the e2e files sign up dozens of people from 127.0.0.1 in one run;
      // the limit's own test sets a low one.
      signup: {
        ...DEFAULT_LIMITS.signup,
        max: countEnv(env, 'SIGNUPS_PER_ADDRESS_PER_HOUR', nodeEnv === 'test' ? 100_000 : DEFAULT_LIMITS.signup.max),
      },
    },
    oauthClients: oauthClients(env),
    toolsAllowedOrigins: (env.TOOLS_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim().replace(/\/$/, ''))
      .filter(Boolean),
    bindHost: env.BIND_HOST || '127.0.0.1',
    embeddedPgPort: intEnv(env, 'EMBEDDED_PG_PORT', DEFAULT_EMBEDDED_PG_PORT),
    emulatorRateLimits: env.EMULATOR_RATE_LIMITS === '1',
    tools: toolPaths(env),
    workflowBundlePath: env.WORKFLOW_BUNDLE_PATH || undefined,
    engineNice: niceEnv(env, 'ENGINE_NICE', nodeEnv === 'test' ? 0 : PRIORITY.engine),
    tenantSchedulesAtStart: switchEnv(env, 'TENANT_SCHEDULES_AT_START', true),
    // Off under test: parallel test processes would all claim 9464; a test that scrapes names a free port.
    metricsPort: intEnv(env, 'METRICS_PORT', nodeEnv === 'test' ? 0 : 9464),
    outboxMaxAgeSeconds: secondsEnv(env, 'OUTBOX_MAX_AGE_SECONDS', 900),
    tracing: tracingConfig(env),
    workerSlots: {
      activities: countEnv(env, 'WORKER_MAX_ACTIVITIES', 100),
      workflowTasks: countEnv(env, 'WORKER_MAX_WORKFLOW_TASKS', 40),
      localActivities: countEnv(env, 'WORKER_MAX_LOCAL_ACTIVITIES', 100),
    },
    exportDestinations: { allowPrivateAddresses: switchEnv(env, 'EXPORT_DESTINATIONS_ALLOW_PRIVATE_ADDRESSES', false) },
    outboundWebhooks: {
      allowPrivateAddresses: privateAddressesAllowed(env, nodeEnv, opts.localStart === true),
      attemptTimeoutMs: countEnv(env, 'OUTBOUND_WEBHOOK_TIMEOUT_MS', 10_000),
      firstRetryMs: countEnv(env, 'OUTBOUND_WEBHOOK_FIRST_RETRY_MS', 5_000),
      retryWindowMs: countEnv(env, 'OUTBOUND_WEBHOOK_RETRY_WINDOW_MS', 3 * 86_400_000),
      allowedPorts: portRangesEnv(env, 'OUTBOUND_WEBHOOK_ALLOWED_PORTS', DEFAULT_OUTBOUND_PORTS),
      maxAttemptsPerSecond: countEnv(env, 'OUTBOUND_WEBHOOK_MAX_ATTEMPTS_PER_SECOND', 100),
      maxDrains: countEnv(env, 'OUTBOUND_WEBHOOK_MAX_DRAINS', 32),
      drainRetryMs: countEnv(env, 'OUTBOUND_WEBHOOK_DRAIN_RETRY_MS', 1_000),
    },
  };
}

function httpLimits(env: NodeJS.ProcessEnv): HttpLimits {
  const maxConnections = countEnv(env, 'HTTP_MAX_CONNECTIONS', DEFAULT_HTTP_LIMITS.maxConnections);
  const raw = env.HTTP_MAX_CONNECTIONS_PER_ADDRESS;
  let maxConnectionsPerAddress = perAddressShare(maxConnections);
  if (raw !== undefined && raw !== '') {
    maxConnectionsPerAddress = Number(raw);
    if (!Number.isInteger(maxConnectionsPerAddress) || maxConnectionsPerAddress < 0) {
      throw new ConfigError(
        'HTTP_MAX_CONNECTIONS_PER_ADDRESS',
        `HTTP_MAX_CONNECTIONS_PER_ADDRESS must be a whole number (0 = no per-address cap), got "${raw}"`,
      );
    }
  }
  return {
    requestTimeoutMs: countEnv(env, 'HTTP_REQUEST_TIMEOUT_MS', DEFAULT_HTTP_LIMITS.requestTimeoutMs),
    headersTimeoutMs: countEnv(env, 'HTTP_HEADERS_TIMEOUT_MS', DEFAULT_HTTP_LIMITS.headersTimeoutMs),
    keepAliveTimeoutMs: countEnv(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs),
    maxConnections,
    maxConnectionsPerAddress,
  };
}

function secondsEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new ConfigError(name, `${name} must be a whole number of seconds (0 = off), got "${raw}"`);
  return n;
}

function privateAddressesAllowed(env: NodeJS.ProcessEnv, nodeEnv: Config['env'], localStart: boolean): boolean {
  const name = 'OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES';
  const raw = env[name];
  if (raw === '1') return true;
  if (raw === '0') return false;
  if (raw !== undefined && raw !== '')
    throw new ConfigError(name, `${name} must be 1 (allow) or 0 (refuse), got "${raw}"`);
  return localStart && nodeEnv !== 'production';
}

/** What production will not run without, all named at once so one restart fixes them all. */
const PRODUCTION_REQUIRED: [string, string][] = [
  ['MASTER_KEY', 'the key that encrypts provider credentials'],
  [
    'STORE_ANDROID_PUSH_SERVICE_ACCOUNT',
    'the service account email of the Play RTDN push subscription; without it any Google-issued token with the right audience is accepted as a push',
  ],
];

function requireForProduction(env: NodeJS.ProcessEnv): void {
  const missing = PRODUCTION_REQUIRED.filter(([name]) => !env[name]);
  if (missing.length === 0) return;
  throw new ConfigError(
    missing[0][0],
    `NODE_ENV=production refuses to start without ${missing.map(([n, why]) => `${n} (${why})`).join(' and ')}`,
  );
}

function portRangesEnv(env: NodeJS.ProcessEnv, name: string, fallback: string): PortRange[] {
  const raw = env[name];
  const parsed = parsePortRanges(raw === undefined || raw === '' ? fallback : raw);
  if (typeof parsed === 'string')
    throw new ConfigError(name, `${name} must list ports and ranges like "${fallback}": ${parsed}`);
  return parsed;
}

/** A nice value: 0 (the default priority) to 19 (yields the most). */
function niceEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 19)
    throw new ConfigError(name, `${name} must be a whole number from 0 to 19, got "${raw}"`);
  return n;
}

/** `1` or `0`; anything else is refused rather than read as one of them. */
function switchEnv(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1' || raw === '0') return raw === '1';
  throw new ConfigError(name, `${name} must be 1 or 0, got "${raw}"`);
}

function countEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new ConfigError(name, `${name} must be a whole number of at least 1, got "${raw}"`);
  return n;
}

function oauthClients(env: NodeJS.ProcessEnv): Config['oauthClients'] {
  const out: Config['oauthClients'] = {};
  for (const p of PROVIDERS) {
    const id = env[`${p.toUpperCase()}_OAUTH_CLIENT_ID`];
    const secret = env[`${p.toUpperCase()}_OAUTH_CLIENT_SECRET`];
    if (id && secret) out[p] = { client_id: id, client_secret: secret };
  }
  return out;
}
