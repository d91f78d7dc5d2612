import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDataDirPrivate } from '../../runtime/data-dir';

const mode = (p: string) => fs.lstatSync(p).mode & 0o7777;

/**
 * Issue 42 (low): `.data/` was created 0755 and its logs, `temporal.db` and emulator state were
 * world-readable. `npm start` now makes it owner-only first thing: fresh, and over an existing
 * install's 0755/0644 tree. test/start/npm-start.test.ts checks the whole tree a real start leaves.
 */
describe('the data dir is its owner’s alone', () => {
  const made: string[] = [];
  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'data-dir-'));
    made.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a fresh data dir is created 0700 (0711 as root, for the embedded Postgres user)', () => {
    const dir = path.join(tmp(), 'nested', '.data');
    makeDataDirPrivate(dir, { root: false });
    expect(mode(dir)).toBe(0o700);
    const asRoot = path.join(tmp(), '.data');
    makeDataDirPrivate(asRoot, { root: true });
    expect(mode(asRoot)).toBe(0o711);
  });

  it('an existing 0755/0644 tree is fixed: every directory 0700, every file 0600; symlinks not followed', () => {
    const dir = tmp();
    const outside = path.join(tmp(), 'outside.txt');
    fs.writeFileSync(outside, 'not ours to change', { mode: 0o644 });
    fs.chmodSync(dir, 0o755);
    for (const d of ['emulators', 'postgres', 'postgres/base/1'])
      fs.mkdirSync(path.join(dir, d), { recursive: true, mode: 0o755 });
    for (const d of ['emulators', 'postgres', 'postgres/base', 'postgres/base/1'])
      fs.chmodSync(path.join(dir, d), 0o755);
    const files = [
      'master.key',
      'demo-login.json',
      'api.log',
      'temporal.db',
      'temporal.db-wal',
      'emulators/psp_a.json',
      'postgres/base/1/1259',
    ];
    for (const f of files) fs.writeFileSync(path.join(dir, f), 'x', { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'temporal.db'), 0o666);
    fs.symlinkSync(outside, path.join(dir, 'link-out'));

    makeDataDirPrivate(dir, { root: false });

    expect(mode(dir)).toBe(0o700);
    for (const d of ['emulators', 'postgres', 'postgres/base', 'postgres/base/1'])
      expect([d, mode(path.join(dir, d))]).toEqual([d, 0o700]);
    for (const f of files) expect([f, mode(path.join(dir, f))]).toEqual([f, 0o600]);
    expect(mode(outside)).toBe(0o644);
    expect(fs.readFileSync(outside, 'utf8')).toBe('not ours to change');
  });
});
