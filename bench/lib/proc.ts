import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { freePort } from '../../runtime/ports';

const live = new Set<ChildProcess>();
const onInterrupt = new Set<() => Promise<void>>();
let hooked = false;

/**
 * Work to do if the bench is interrupted (SIGINT/SIGTERM/SIGHUP) before its own `finally` runs,
 * such as dropping its throwaway database; bounded to 5 s. Returns a function that unregisters it.
 */
export function atInterrupt(cleanup: () => Promise<void>): () => void {
  hookSignals();
  onInterrupt.add(cleanup);
  return () => onInterrupt.delete(cleanup);
}

/**
 * A child a bench started dies with the bench: when it exits normally, on an error
 * (`process.exit(1)` skips every `finally` still pending) and on SIGINT/SIGTERM/SIGHUP (a
 * signal sent to the bench's pid alone never reaches its children). Otherwise a failed run
 * leaves its servers listening.
 */
export function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  hookSignals();
}

function hookSignals(): void {
  if (hooked) return;
  hooked = true;
  // 'exit' handlers must be synchronous: kill() only sends the signal, which is all that is needed.
  process.once('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      for (const c of live) c.kill('SIGTERM');
      const done = Promise.allSettled([...onInterrupt].map((f) => f()));
      const deadline = new Promise((r) => setTimeout(r, 5000).unref());
      void Promise.race([done, deadline]).then(() => process.exit(128 + (os.constants.signals[sig] ?? 0)));
    });
  }
}

export interface ServerHandle {
  pid: number;
  port: number;
  /** Where the child's stdout (its JSON request log) went. */
  logFile: string;
  logBytes(): number;
  stop(): Promise<void>;
}

function get(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

/**
 * Start a server as a child `node --import tsx <script>` (so the measured pid is the server
 * itself), stdout to `logFile`, and wait until `GET healthPath` answers 200.
 */
export async function startServer(opts: {
  cwd: string;
  script: string;
  env: NodeJS.ProcessEnv;
  port: number;
  logFile: string;
  healthPath?: string;
  timeoutMs?: number;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeArgs?: string[];
}): Promise<ServerHandle> {
  const out = fs.openSync(opts.logFile, 'w');
  const child: ChildProcess = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', opts.script], {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['ignore', out, 'pipe'],
  });
  fs.closeSync(out);
  track(child);
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
    if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
  });
  let exited: number | null = null;
  const exit = new Promise<void>((r) => child.once('exit', (code) => ((exited = code ?? -1), r())));
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  while ((await get(opts.port, opts.healthPath ?? '/healthz')) !== 200) {
    if (exited !== null) throw new Error(`${opts.script} exited with ${exited} before listening:\n${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `${opts.script} did not answer on :${opts.port} within ${opts.timeoutMs ?? 30_000} ms:\n${stderr}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: child.pid!,
    port: opts.port,
    logFile: opts.logFile,
    logBytes: () => {
      try {
        return fs.statSync(opts.logFile).size;
      } catch {
        return 0;
      }
    },
    stop: async () => {
      if (exited === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exit;
        clearTimeout(t);
      }
      if (stderr.trim()) process.stderr.write(`[${opts.script} stderr]\n${stderr.slice(-4000)}\n`);
    },
  };
}

/**
 * The environment of a server a read bench starts: production settings with what production
 * requires filled in (the Play push service account: no pushes arrive), no Temporal (the read
 * paths measured never touch it), the caller's `settings`, and the ports: the api's three
 * listeners (the measured one at `port`), or the floor server's one.
 */
export async function benchServerEnv(
  kind: 'api' | 'floor',
  port: number,
  settings: NodeJS.ProcessEnv,
): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    METRICS_PORT: '0',
    STORE_ANDROID_PUSH_SERVICE_ACCOUNT: 'bench-push@bench.iam.gserviceaccount.com',
    ...settings,
  };
  delete env.TEMPORAL_ADDRESS;
  if (kind === 'floor') env.PORT = String(port);
  else
    Object.assign(env, {
      API_PORT: String(port),
      DASHBOARD_PORT: String(await freePort()),
      TOOLS_PORT: String(await freePort()),
    });
  return env;
}
