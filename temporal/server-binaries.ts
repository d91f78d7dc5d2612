import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { toolPaths, type ToolPaths } from '../runtime/config';

/**
 * Temporal's own server (not the CLI's dev server) and its SQL schema tool, built from the Go
 * module proxy like the CLI (temporal/binary.ts). One version for both: the tool's embedded
 * schema must be the one the server expects.
 */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
export const TEMPORAL_SERVER_MODULES = {
  'temporal-server': `go.temporal.io/server/cmd/server@${TEMPORAL_SERVER_VERSION}`,
  'temporal-sql-tool': `go.temporal.io/server/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`,
} as const;

export interface ServerBinaries {
  server: string;
  sqlTool: string;
}

function goBinary(): string | undefined {
  const r = spawnSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' });
  if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  return fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined;
}

/**
 * `temporal-server` and `temporal-sql-tool` from the per-user cache, built there when missing
 * and Go is present. `go install` names a binary after its package (`server`, `sql`), too vague
 * for a shared bin directory, so each is built into a scratch GOBIN and moved in under the name
 * Temporal's own images give it.
 */
export function findTemporalServerBinaries(
  opts: { build?: boolean; log?: (m: string) => void; tools?: ToolPaths } = {},
): ServerBinaries {
  const cacheDir = (opts.tools ?? toolPaths()).toolCacheDir;
  const at = (name: keyof typeof TEMPORAL_SERVER_MODULES) => path.join(cacheDir, name);
  const missing = (Object.keys(TEMPORAL_SERVER_MODULES) as (keyof typeof TEMPORAL_SERVER_MODULES)[]).filter(
    (n) => !fs.existsSync(at(n)),
  );
  if (missing.length) {
    const go = goBinary();
    if (opts.build === false || !go) {
      throw new Error(
        `${missing.join(' and ')} not found in ${cacheDir}. Install Go and run \`go install ${missing.map((n) => TEMPORAL_SERVER_MODULES[n]).join(' ')}\`` +
          ` with GOBIN=<a scratch dir>, then move server → ${at('temporal-server')} and sql → ${at('temporal-sql-tool')}.`,
      );
    }
    opts.log?.(
      `Building ${missing.join(' and ')} ${TEMPORAL_SERVER_VERSION} into ${cacheDir} (one time, a few minutes)…`,
    );
    fs.mkdirSync(cacheDir, { recursive: true });
    // Beside the cache (same file system), so the move is a rename.
    const scratch = fs.mkdtempSync(path.join(cacheDir, '.build-'));
    try {
      execFileSync(go, ['install', ...missing.map((n) => TEMPORAL_SERVER_MODULES[n])], {
        env: { ...process.env, GOBIN: scratch },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      for (const n of missing)
        fs.renameSync(path.join(scratch, path.basename(TEMPORAL_SERVER_MODULES[n].split('@')[0])), at(n));
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }
  return { server: at('temporal-server'), sqlTool: at('temporal-sql-tool') };
}
