import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findTemporalServerBinaries, TEMPORAL_SERVER_VERSION } from '../../temporal/server-binaries';

describe("finding Temporal's server and SQL tool", () => {
  const cache = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cache-'));

  it('uses the per-user cache shared by every clone, under the names the server images use', () => {
    const dir = cache();
    for (const n of ['temporal-server', 'temporal-sql-tool'])
      fs.writeFileSync(path.join(dir, n), '#!/bin/sh\n', { mode: 0o755 });
    expect(findTemporalServerBinaries({ build: false, tools: { toolCacheDir: dir } })).toEqual({
      server: path.join(dir, 'temporal-server'),
      sqlTool: path.join(dir, 'temporal-sql-tool'),
    });
  });

  it('says what to build, at which version, when the cache lacks one and it may not build', () => {
    const dir = cache();
    fs.writeFileSync(path.join(dir, 'temporal-server'), '#!/bin/sh\n', { mode: 0o755 });
    expect(TEMPORAL_SERVER_VERSION).toBe('v1.29.1');
    const err = (() => {
      try {
        findTemporalServerBinaries({ build: false, tools: { toolCacheDir: dir } });
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(err).toMatch(/^temporal-sql-tool not found/);
    expect(err).toContain('go install go.temporal.io/server/cmd/tools/sql@v1.29.1');
    expect(err).not.toContain('cmd/server@');
  });
});
