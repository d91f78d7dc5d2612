import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROVIDERS, type ProviderId } from '../domain/providers';
import { DEFAULT_LIMITS, type Limits } from '../db/login-attempts';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from '../api/http-server';

/** Repository root, resolved from this file so scripts work from any cwd. */
export const ROOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export { PROVIDERS, type ProviderId } from '../domain/providers';

/** Emulator ports follow the provider order of DESIGN.md: 4101..4105. */
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

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface Config {
  env: 'development' | 'production' | 'test';
  dataDir: string;
  apiPort: number;
  dashboardPort: number;
  toolsPort: number;
  databaseUrl?: string;
  temporalAddress?: string;
  temporalNamespace: string;
  taskQueue: string;
  /** Ports of the local dev server `npm start` runs when TEMPORAL_ADDRESS is not set. */
  temporalDevPort: number;
  temporalUiPort: number;
  /** Where people open the Temporal UI (links in sync responses); `TEMPORAL_UI_URL`, else the local dev server's UI. */
  temporalUiUrl: string;
  masterKey?: string;
  logLevel: string;
  emulatorPorts: Record<ProviderId, number>;
  /** Where each provider adapter sends its API calls (the emulators by default). */
  providerBaseUrls: Record<ProviderId, string>;
  /** Public base URL of the dashboard host, used to build webhook URLs and the OAuth redirect_uri. */
  publicDashboardUrl: string;
  /** Public base URL of the API host (`PUBLIC_API_URL`): the SDK's `backend` in the dashboard's snippet. */
  publicApiUrl: string;
  /**
   * Reverse proxies whose X-Forwarded-For / X-Forwarded-Proto / X-Forwarded-Host are believed
   * (`TRUSTED_PROXIES`, comma-separated addresses or CIDR ranges). Empty: nobody's are, and the
   * client is the TCP peer. See api/client-address.ts.
   */
  trustedProxies: string[];
  /** Login and sign-up limits (db/login-attempts.ts); `SIGNUPS_PER_ADDRESS_PER_HOUR` sets the sign-up one. */
  dashboardLimits: Limits;
  /** Per-listener timeouts and connection cap: HTTP_REQUEST_TIMEOUT_MS, HTTP_HEADERS_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS, HTTP_MAX_CONNECTIONS. */
  httpLimits: HttpLimits;
  /**
   * The service account of the Play RTDN Pub/Sub push subscription
   * (`STORE_ANDROID_PUSH_SERVICE_ACCOUNT`): a push token must name it. Without it any
   * Google-issued token with the right audience would do, so production refuses to start.
   */
  storeAndroidPushServiceAccount?: string;
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
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
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
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'billing',
    temporalDevPort: intEnv(env, 'TEMPORAL_PORT', 7233),
    temporalUiPort: intEnv(env, 'TEMPORAL_UI_PORT', 8233),
    temporalUiUrl: (env.TEMPORAL_UI_URL || `http://127.0.0.1:${intEnv(env, 'TEMPORAL_UI_PORT', 8233)}`).replace(/\/$/, ''),
    masterKey: env.MASTER_KEY || undefined,
    logLevel: env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info'),
    emulatorPorts,
    providerBaseUrls,
    publicDashboardUrl: (env.PUBLIC_DASHBOARD_URL || `http://127.0.0.1:${dashboardPort}`).replace(/\/$/, ''),
    publicApiUrl: (env.PUBLIC_API_URL || `http://127.0.0.1:${intEnv(env, 'API_PORT', 4000)}`).replace(/\/$/, ''),
    trustedProxies: (env.TRUSTED_PROXIES ?? '').split(',').map((p) => p.trim()).filter(Boolean),
    storeAndroidPushServiceAccount: env.STORE_ANDROID_PUSH_SERVICE_ACCOUNT || undefined,
    httpLimits: {
      requestTimeoutMs: countEnv(env, 'HTTP_REQUEST_TIMEOUT_MS', DEFAULT_HTTP_LIMITS.requestTimeoutMs),
      headersTimeoutMs: countEnv(env, 'HTTP_HEADERS_TIMEOUT_MS', DEFAULT_HTTP_LIMITS.headersTimeoutMs),
      keepAliveTimeoutMs: countEnv(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs),
      maxConnections: countEnv(env, 'HTTP_MAX_CONNECTIONS', DEFAULT_HTTP_LIMITS.maxConnections),
    },
    dashboardLimits: {
      ...DEFAULT_LIMITS,
      // Under NODE_ENV=test the e2e files sign up dozens of people from 127.0.0.1 in one run;
      // the limit's own test sets a low one.
      signup: { ...DEFAULT_LIMITS.signup, max: countEnv(env, 'SIGNUPS_PER_ADDRESS_PER_HOUR', nodeEnv === 'test' ? 100_000 : DEFAULT_LIMITS.signup.max) },
    },
    oauthClients: oauthClients(env),
    toolsAllowedOrigins: (env.TOOLS_ALLOWED_ORIGINS ?? '').split(',').map((o) => o.trim().replace(/\/$/, '')).filter(Boolean),
  };
}

/** What production will not run without, all named at once so one restart fixes them all. */
const PRODUCTION_REQUIRED: [string, string][] = [
  ['MASTER_KEY', 'the key that encrypts provider credentials'],
  ['STORE_ANDROID_PUSH_SERVICE_ACCOUNT', 'the service account email of the Play RTDN push subscription; without it any Google-issued token with the right audience is accepted as a push'],
];

function requireForProduction(env: NodeJS.ProcessEnv): void {
  const missing = PRODUCTION_REQUIRED.filter(([name]) => !env[name]);
  if (missing.length === 0) return;
  throw new ConfigError(
    missing[0][0],
    `NODE_ENV=production refuses to start without ${missing.map(([n, why]) => `${n} (${why})`).join(' and ')}`,
  );
}

function countEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new ConfigError(name, `${name} must be a whole number of at least 1, got "${raw}"`);
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
