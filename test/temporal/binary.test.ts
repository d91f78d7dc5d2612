import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findTemporalBinary, toolCacheDir } from '../../temporal/binary';

describe('finding the Temporal CLI', () => {
  const saved = {
    PATH: process.env.PATH,
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
    TEMPORAL_CLI: process.env.TEMPORAL_CLI,
  };
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('uses the per-user cache shared by every clone', () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'cache-'));
    process.env.XDG_CACHE_HOME = cache;
    delete process.env.TEMPORAL_CLI;
    fs.mkdirSync(toolCacheDir(), { recursive: true });
    fs.writeFileSync(path.join(toolCacheDir(), 'temporal'), '#!/bin/sh\n', { mode: 0o755 });
    expect(findTemporalBinary({ build: false })).toBe(path.join(cache, 'billing-tools', 'bin', 'temporal'));
  });

  it('says how to get it when neither PATH nor the cache has it and it may not build', () => {
    process.env.XDG_CACHE_HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'cache-'));
    process.env.PATH = '/usr/bin:/bin';
    delete process.env.TEMPORAL_CLI;
    expect(() => findTemporalBinary({ build: false })).toThrow(
      /go install github\.com\/temporalio\/cli\/cmd\/temporal@v1\.5\.1.*TEMPORAL_ADDRESS/s,
    );
  });
});
