import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { toolPaths, type ToolPaths } from '../runtime/config';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

/** Where Go lives when it is installed but not on PATH (the official tarball's place). */
const GO_OFF_PATH = ['/usr/local/go/bin/go'];

/** Per-user cache shared by every clone on the machine (CI's fresh clone included). */
export function toolCacheDir(tools: ToolPaths = toolPaths()): string {
  return tools.toolCacheDir;
}

function onPath(name: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const found = r.stdout.trim();
  return r.status === 0 && found ? found : undefined;
}

/** What is on this machine, as the choice below needs it. */
export interface CliCandidates {
  /** `TEMPORAL_CLI`. */
  explicit?: string;
  /** The Go-built binary in the per-user cache. */
  built?: string;
  onPath?: string;
  go?: string;
}

export type CliSource = { kind: 'use'; path: string } | { kind: 'build'; go: string } | { kind: 'none' };

/**
 * Where the CLI comes from: `TEMPORAL_CLI`, then the binary built into the cache, then PATH; else
 * built from source with Go (the pinned module) when Go is present and the caller allows it; else
 * nothing, and the caller stops saying how to install it. Nothing is ever downloaded: a binary
 * from a download we cannot check against a published checksum is never executed.
 */
export function chooseCliSource(c: CliCandidates, allow: { build: boolean }): CliSource {
  const found = c.explicit ?? c.built ?? c.onPath;
  if (found) return { kind: 'use', path: found };
  if (allow.build && c.go) return { kind: 'build', go: c.go };
  return { kind: 'none' };
}

/** The stop message when no CLI was found and none could be built: the commands that install one. */
export function cliMissingMessage(cacheDir: string): string {
  return (
    `The Temporal CLI was not found (TEMPORAL_CLI, ${cacheDir}, PATH) and Go is not installed to build it. ` +
    'Nothing is downloaded for you. Install it with Go: `GOBIN=' +
    cacheDir +
    ' go install ' +
    TEMPORAL_CLI_MODULE +
    "`, or with Temporal's own installer (https://docs.temporal.io/cli), then set TEMPORAL_CLI=/path/to/temporal " +
    '(not needed for the Go build in that directory). Or set TEMPORAL_ADDRESS to a running cluster.'
  );
}

function candidates(tools: ToolPaths, goOffPath: string[]): CliCandidates {
  const built = path.join(tools.toolCacheDir, 'temporal');
  return {
    explicit: tools.temporalCli,
    built: fs.existsSync(built) ? built : undefined,
    onPath: onPath('temporal'),
    go: onPath('go') ?? goOffPath.find((p) => fs.existsSync(p)),
  };
}

function buildWithGo(go: string, cacheDir: string, log?: (m: string) => void): string | undefined {
  log?.(`Building the Temporal CLI into ${cacheDir} (one time, a few minutes)…`);
  fs.mkdirSync(cacheDir, { recursive: true });
  execFileSync(go, ['install', TEMPORAL_CLI_MODULE], {
    // The build inherits the caller's environment (Go's own settings), with the cache as GOBIN.
    env: { ...process.env, GOBIN: cacheDir },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const built = path.join(cacheDir, 'temporal');
  return fs.existsSync(built) ? built : undefined;
}

/**
 * The Temporal CLI (which carries the dev server): `TEMPORAL_CLI`, the cache, PATH, else built
 * with Go when present (unless `build: false`); else it throws cliMissingMessage. `goOffPath`:
 * where to look for Go beyond PATH (tests pass [] to stand for a machine without Go).
 */
export function findTemporalBinary(
  opts: { build?: boolean; log?: (m: string) => void; tools?: ToolPaths; goOffPath?: string[] } = {},
): string {
  const tools = opts.tools ?? toolPaths();
  const source = chooseCliSource(candidates(tools, opts.goOffPath ?? GO_OFF_PATH), { build: opts.build !== false });
  if (source.kind === 'use') return source.path;
  if (source.kind === 'build') {
    const built = buildWithGo(source.go, tools.toolCacheDir, opts.log);
    if (built) return built;
  }
  throw new Error(cliMissingMessage(tools.toolCacheDir));
}
