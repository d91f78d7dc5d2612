import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { retryUntil } from './deadline';

/** Small TCP helpers: wait for a listener, probe a port, find a free one. */

export async function waitForPort(host: string, port: number, timeoutMs: number): Promise<void> {
  await retryUntil(timeoutMs, 150, async () => {
    if (!(await isPortOpen(host, port))) throw new Error(`nothing listened on ${host}:${port} within ${timeoutMs} ms`);
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

/**
 * A port nothing else will take before the caller binds it. Two things can steal a port that
 * `listen(0)` handed out and closed: any outbound connection (its local port comes from the same
 * ephemeral range) and another process's `freePort`. So the port is picked below the kernel's
 * ephemeral range, and reserved across processes with a lock file (stale when its pid is gone).
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const top = Math.min(low, 65_536) - 1;
  const bottom = Math.max(1_024, top - 12_000);
  fs.mkdirSync(LOCK_DIR, { recursive: true });
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = bottom + Math.floor(Math.random() * (top - bottom));
    if (taken.has(port) || !reserve(port)) continue;
    if (await canListen(port)) {
      taken.add(port);
      return port;
    }
  }
  throw new Error(`no free port found in ${bottom}–${top}`);
}

const LOCK_DIR = path.join(os.tmpdir(), 'billing-port-locks');
const taken = new Set<number>();

function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (lo > 2_048 && hi >= lo) return [lo, hi];
  } catch {
    /* not Linux: the IANA dynamic range */
  }
  return [49_152, 65_535];
}

/** Claim `port` for this process; a claim by a process that has exited is taken over. */
function reserve(port: number): boolean {
  const file = path.join(LOCK_DIR, String(port));
  try {
    fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    const owner = Number(fs.readFileSync(file, 'utf8').trim() || 0);
    if (owner === process.pid || processExists(owner)) return false;
    fs.writeFileSync(file, String(process.pid));
    return true;
  }
}

function processExists(pid: number): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}
