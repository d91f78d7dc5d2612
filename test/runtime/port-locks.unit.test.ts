import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../../runtime/ports';

/**
 * Issue 42 (low): the port-lock directory sat in the shared temp dir under one name for every
 * user and was written through whatever was found there. Now it is per user, 0700, checked
 * with lstat, and a lock is created with O_EXCL|O_NOFOLLOW: a planted symlink is never followed.
 * Each test gives the process a temp dir of its own (TMPDIR), so nothing here meets the other
 * test files' locks.
 */
describe('port locks', { timeout: 60_000 }, () => {
  const saved = process.env.TMPDIR;
  const uid = process.getuid!();
  let tmp: string;
  let victim: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'port-locks-'));
    victim = path.join(tmp, 'victim');
    fs.mkdirSync(victim);
    fs.writeFileSync(path.join(victim, 'precious'), 'untouched');
    process.env.TMPDIR = path.join(tmp, 'shared');
    fs.mkdirSync(process.env.TMPDIR);
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  const lockDir = () => path.join(process.env.TMPDIR!, `billing-ports-${uid}`);

  /** The claim other processes respect: a regular file named after the port, holding our pid. */
  function expectClaimed(port: number) {
    const lock = path.join(lockDir(), String(port));
    expect(fs.lstatSync(lock).isFile()).toBe(true);
    expect(fs.readFileSync(lock, 'utf8')).toBe(String(process.pid));
    expect(fs.statSync(lock).mode & 0o777).toBe(0o600);
  }

  it('a symlink planted where the directory goes is not followed; the locks go to a real 0700 directory', async () => {
    fs.symlinkSync(victim, lockDir());
    const port = await freePort();
    expect(fs.readdirSync(victim)).toEqual(['precious']);
    const dir = fs.lstatSync(lockDir());
    expect(dir.isDirectory() && !dir.isSymbolicLink()).toBe(true);
    expect(dir.mode & 0o777).toBe(0o700);
    expect(dir.uid).toBe(uid);
    expectClaimed(port);
  });

  it('a symlink planted where a lock goes is not written through; the lock is still taken', async () => {
    fs.mkdirSync(lockDir(), { mode: 0o755 });
    fs.chmodSync(lockDir(), 0o755); // an existing directory someone else could list is made private
    const target = path.join(victim, 'precious');
    // Every port freePort might pick (below the kernel's ephemeral range) carries a symlink to the file.
    const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const top = Math.min(low, 65_536) - 1;
    for (let p = Math.max(1_024, top - 12_000); p <= top; p++) fs.symlinkSync(target, path.join(lockDir(), String(p)));
    const port = await freePort();
    expect(fs.readFileSync(target, 'utf8')).toBe('untouched');
    expect(fs.lstatSync(lockDir()).mode & 0o777).toBe(0o700);
    expectClaimed(port);
    expect(fs.lstatSync(path.join(lockDir(), String(port === top ? port - 1 : port + 1))).isSymbolicLink()).toBe(true); // only the port it took was replaced
  });
});
