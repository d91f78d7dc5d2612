import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chooseCliSource, findTemporalBinary } from '../../temporal/binary';
import { ROOT_DIR } from '../../runtime/config';

/**
 * Issue 42, item 6: the Temporal CLI is never downloaded (its published checksums cannot be
 * checked from here, and an unverified binary is never executed). It comes from TEMPORAL_CLI, the
 * Go build in the per-user cache, PATH, or a Go build now; else `npm start` and the test setup
 * stop with the commands that install it.
 */
describe('where the Temporal CLI comes from', () => {
  const build = { build: true };

  it('a binary already there wins: TEMPORAL_CLI, then the cache (the Go build), then PATH', () => {
    const all = { explicit: '/x/temporal', built: '/c/temporal', onPath: '/usr/bin/temporal', go: '/go' };
    expect(chooseCliSource(all, build)).toEqual({ kind: 'use', path: '/x/temporal' });
    expect(chooseCliSource({ ...all, explicit: undefined }, build)).toEqual({ kind: 'use', path: '/c/temporal' });
    expect(chooseCliSource({ onPath: '/usr/bin/temporal', go: '/go' }, build)).toEqual({
      kind: 'use',
      path: '/usr/bin/temporal',
    });
  });

  it('none there: built with Go when Go is present, else nothing (never a download)', () => {
    expect(chooseCliSource({ go: '/usr/local/go/bin/go' }, build)).toEqual({
      kind: 'build',
      go: '/usr/local/go/bin/go',
    });
    expect(chooseCliSource({}, build)).toEqual({ kind: 'none' });
    expect(chooseCliSource({ go: '/go' }, { build: false })).toEqual({ kind: 'none' });
  });
});

describe('a machine without Go and without the CLI', () => {
  const saved = { PATH: process.env.PATH, GOPROXY: process.env.GOPROXY };
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    vi.restoreAllMocks();
  });

  it('stops with the command that installs it and TEMPORAL_CLI, writing and fetching nothing', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'no-temporal-'));
    const cacheDir = path.join(home, 'billing-tools', 'bin');
    process.env.PATH = '/usr/bin:/bin'; // neither `go` nor `temporal` there
    process.env.GOPROXY = 'off'; // should a Go be found after all, it fails at once instead of building
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    let message = '';
    try {
      findTemporalBinary({ tools: { toolCacheDir: cacheDir }, goOffPath: [] });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`GOBIN=${cacheDir} go install github.com/temporalio/cli/cmd/temporal@v1.5.1`);
    expect(message).toMatch(/Temporal's own installer/);
    expect(message).toContain('TEMPORAL_CLI=/path/to/temporal');
    expect(message).toMatch(/Nothing is downloaded/);
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(fs.readdirSync(home)).toEqual([]); // no cache made, nothing fetched into it
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('a binary a former release downloaded into the cache is not run', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'old-download-'));
    const cacheDir = path.join(home, 'billing-tools', 'bin');
    fs.mkdirSync(cacheDir, { recursive: true });
    fs.writeFileSync(path.join(cacheDir, 'temporal-sdk-typescript-1.11.0'), '#!/bin/sh\n', { mode: 0o755 });
    process.env.PATH = '/usr/bin:/bin';
    process.env.GOPROXY = 'off';
    expect(() => findTemporalBinary({ tools: { toolCacheDir: cacheDir }, goOffPath: [] })).toThrow(
      /Nothing is downloaded/,
    );
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('no code that starts a dev server can download one', () => {
    // Every file that finds or starts the CLI (the dev server's callers: npm start, the test
    // setup, the benches) goes through temporal/binary.ts; none of them opens a connection.
    expect(fs.existsSync(path.join(ROOT_DIR, 'temporal/cli-download.ts'))).toBe(false);
    for (const file of ['temporal/binary.ts', 'temporal/dev-server.ts', 'scripts/start.ts', 'test/global-setup.ts']) {
      const text = fs.readFileSync(path.join(ROOT_DIR, file), 'utf8');
      expect(text, file).not.toMatch(/\bfetch\(|node:https?['"]|temporal\.download\/cli\/default|cli-download/);
    }
  });
});
