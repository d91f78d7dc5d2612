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
 * ephemeral range, and reserved across processes with a lock file in a per-user directory (stale
 * when its pid is gone).
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const top = Math.min(low, 65_536) - 1;
  const bottom = Math.max(1_024, top - 12_000);
  const dir = lockDir();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = bottom + Math.floor(Math.random() * (top - bottom));
    if (taken.has(port) || !reserve(dir, port)) continue;
    if (await canListen(port)) {
      taken.add(port);
      return port;
    }
  }
  throw new Error(`no free port found in ${bottom}–${top}`);
}

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

/**
 * The lock directory: one per user in the shared temp dir (`billing-ports-<uid>`), 0700. Anyone
 * may create names there first, so what is found is checked without following it (lstat): a real
 * directory owned by us. A symlink or file of ours in its place is removed and the directory made;
 * one we cannot remove (another user's) leaves us a fresh private directory of our own.
 */
function lockDir(): string {
  const uid = process.getuid?.() ?? 0;
  const dir = path.join(os.tmpdir(), `billing-ports-${uid}`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const found = fs.lstatSync(dir);
    if (found.isDirectory() && found.uid === uid) {
      if ((found.mode & 0o777) !== 0o700) fs.chmodSync(dir, 0o700);
      return dir;
    }
    if (found.uid !== uid || found.isDirectory()) break;
    fs.unlinkSync(dir); // our own symlink or file: removed, never followed
  }
  return fs.mkdtempSync(`${dir}-`);
}

/** Create `file` holding our pid; never through a symlink, never over an existing name. */
function createLock(file: string): boolean {
  try {
    const fd = fs.openSync(
      file,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
      0o600,
    );
    fs.writeSync(fd, String(process.pid));
    fs.closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** The pid a lock names; 0 when it is not a regular file (a planted symlink) or names none. */
function lockOwner(file: string): number {
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      return fs.fstatSync(fd).isFile() ? Number(fs.readFileSync(fd, 'utf8').trim()) || 0 : 0;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return 0;
  }
}

/**
 * Claim `port` for this process. A claim by a process that has exited (or anything that is not a
 * claim) is taken over by renaming a fresh lock onto its name (a rename replaces a symlink itself,
 * never its target), and kept only if the name then holds our pid (two takers: the last wins).
 */
function reserve(dir: string, port: number): boolean {
  const file = path.join(dir, String(port));
  if (createLock(file)) return true;
  const owner = lockOwner(file);
  if (owner === process.pid || processExists(owner)) return false;
  const fresh = `${file}.${process.pid}`;
  fs.rmSync(fresh, { force: true });
  if (!createLock(fresh)) return false;
  fs.renameSync(fresh, file);
  return lockOwner(file) === process.pid;
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
