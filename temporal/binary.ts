import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { toolPaths, type ToolPaths } from '../runtime/config';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

/** Per-user cache shared by every clone on the machine (CI's fresh clone included). */
export function toolCacheDir(tools: ToolPaths = toolPaths()): string {
  return tools.toolCacheDir;
}

function onPath(name: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const found = r.stdout.trim();
  return r.status === 0 && found ? found : undefined;
}

/**
 * The Temporal CLI (which carries the dev server): `TEMPORAL_CLI` when set, then PATH, then the
 * per-user cache, building it there with `go install` when Go is present.
 */
export function findTemporalBinary(
  opts: { build?: boolean; log?: (m: string) => void; tools?: ToolPaths } = {},
): string {
  const tools = opts.tools ?? toolPaths();
  if (tools.temporalCli) return tools.temporalCli;
  const cacheDir = tools.toolCacheDir;
  const cached = path.join(cacheDir, 'temporal');
  if (fs.existsSync(cached)) return cached;
  const fromPath = onPath('temporal');
  if (fromPath) return fromPath;
  const go = onPath('go') ?? (fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (opts.build !== false && go) {
    opts.log?.(`Building the Temporal CLI into ${cacheDir} (one time, a few minutes)…`);
    fs.mkdirSync(cacheDir, { recursive: true });
    execFileSync(go, ['install', TEMPORAL_CLI_MODULE], {
      // The build inherits the caller's environment (Go's own settings), with the cache as GOBIN.
      env: { ...process.env, GOBIN: cacheDir },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (fs.existsSync(cached)) return cached;
  }
  throw new Error(
    'The Temporal CLI was not found. Install Go and run `go install ' +
      TEMPORAL_CLI_MODULE +
      '` with GOBIN=' +
      cacheDir +
      ', put `temporal` on PATH, or set TEMPORAL_ADDRESS to a running cluster.',
  );
}
