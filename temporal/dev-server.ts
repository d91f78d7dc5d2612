import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { findTemporalBinary } from './binary';
import { devServerSearchAttributeFlags } from './search-attributes';

export interface DevServerHandle {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

export function waitForPort(host: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const sock = net.connect({ host, port }, () => {
        sock.end();
        resolve();
      });
      sock.on('error', () => {
        sock.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing listened on ${host}:${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 150);
      });
    };
    attempt();
  });
}

export function isPortOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port }, () => {
      sock.end();
      resolve(true);
    });
    sock.on('error', () => resolve(false));
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/**
 * Start `temporal server start-dev`. With `dbFile` the state survives restarts; without it the
 * server is in-memory (tests). `uiPort: null` runs headless.
 */
export async function startDevServer(opts: {
  port: number;
  uiPort?: number | null;
  dbFile?: string;
  logFile?: string;
  log?: (m: string) => void;
}): Promise<DevServerHandle> {
  const bin = findTemporalBinary({ log: opts.log });
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--log-level', 'warn',
    ...devServerSearchAttributeFlags()];
  if (opts.uiPort === null) args.push('--headless');
  else if (opts.uiPort !== undefined) args.push('--ui-port', String(opts.uiPort));
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  const out = opts.logFile ? fs.openSync(opts.logFile, 'a') : 'ignore';
  const child = spawn(bin, args, { stdio: ['ignore', out, out], detached: false });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`temporal dev server exited early (code ${code}); see ${opts.logFile ?? 'its output'}`))),
  );
  exited.catch(() => {});
  await Promise.race([waitForPort('127.0.0.1', opts.port, 60_000), exited]);
  return {
    address: `127.0.0.1:${opts.port}`,
    uiUrl: opts.uiPort === null ? undefined : `http://127.0.0.1:${opts.uiPort ?? opts.port + 1000}`,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}
