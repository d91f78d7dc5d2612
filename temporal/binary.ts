import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { toolPaths, type ToolPaths } from '../runtime/config';
import {
  cliDownloadPlan,
  downloadTemporalCli,
  TEMPORAL_DOWNLOAD_ROOT,
  temporalSdkVersion,
  type CliDownloadPlan,
} from './cli-download';

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

/** What is on this machine, as the choice below needs it. */
export interface CliCandidates {
  /** `TEMPORAL_CLI`. */
  explicit?: string;
  /** The Go-built binary in the per-user cache. */
  built?: string;
  /** A downloaded binary in the per-user cache. */
  downloaded?: string;
  onPath?: string;
  go?: string;
}

export type CliSource =
  { kind: 'use'; path: string } | { kind: 'build'; go: string } | { kind: 'download' } | { kind: 'none' };

/**
 * Where the CLI comes from: `TEMPORAL_CLI`, then a binary already in the cache (built or
 * downloaded), then PATH; else built with Go when Go is present (from source, the pinned module),
 * else downloaded (where Go is absent), else nothing (`allow` says which a caller permits).
 */
export function chooseCliSource(c: CliCandidates, allow: { build: boolean; download: boolean }): CliSource {
  const found = c.explicit ?? c.built ?? c.downloaded ?? c.onPath;
  if (found) return { kind: 'use', path: found };
  if (allow.build && c.go) return { kind: 'build', go: c.go };
  if (allow.download && !c.go) return { kind: 'download' };
  return { kind: 'none' };
}

/** What a newcomer is told when no way worked, with the download's failure when one was tried. */
export function cliMissingMessage(cacheDir: string, downloadFailure?: string): string {
  return (
    (downloadFailure
      ? `The Temporal CLI was not found, and downloading it from ${TEMPORAL_DOWNLOAD_ROOT} failed (${downloadFailure}). `
      : 'The Temporal CLI was not found. ') +
    'Install Go and run `go install ' +
    TEMPORAL_CLI_MODULE +
    '` with GOBIN=' +
    cacheDir +
    ', put `temporal` on PATH, set TEMPORAL_CLI to the binary, or set TEMPORAL_ADDRESS to a running cluster.'
  );
}

function candidates(tools: ToolPaths, plan: CliDownloadPlan | undefined): CliCandidates {
  const built = path.join(tools.toolCacheDir, 'temporal');
  const go = onPath('go') ?? (fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  return {
    explicit: tools.temporalCli,
    built: fs.existsSync(built) ? built : undefined,
    downloaded: plan && fs.existsSync(plan.dest) ? plan.dest : undefined,
    onPath: onPath('temporal'),
    go,
  };
}

function downloadPlan(tools: ToolPaths): CliDownloadPlan | undefined {
  try {
    return cliDownloadPlan({
      platform: process.platform,
      arch: process.arch,
      sdkVersion: temporalSdkVersion(),
      cacheDir: tools.toolCacheDir,
    });
  } catch {
    return undefined; // an unsupported platform: no download to look for or make
  }
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
 * The Temporal CLI (which carries the dev server), synchronously: `TEMPORAL_CLI`, the cache, PATH,
 * else built with Go when present. No download (see obtainTemporalBinary).
 */
export function findTemporalBinary(
  opts: { build?: boolean; log?: (m: string) => void; tools?: ToolPaths } = {},
): string {
  const tools = opts.tools ?? toolPaths();
  const source = chooseCliSource(candidates(tools, downloadPlan(tools)), {
    build: opts.build !== false,
    download: false,
  });
  if (source.kind === 'use') return source.path;
  if (source.kind === 'build') {
    const built = buildWithGo(source.go, tools.toolCacheDir, opts.log);
    if (built) return built;
  }
  throw new Error(cliMissingMessage(tools.toolCacheDir));
}

/** As findTemporalBinary, and where Go is absent, downloaded into the cache once (what `npm start` uses). */
export async function obtainTemporalBinary(
  opts: { log?: (m: string) => void; tools?: ToolPaths } = {},
): Promise<string> {
  const tools = opts.tools ?? toolPaths();
  const plan = downloadPlan(tools);
  const source = chooseCliSource(candidates(tools, plan), { build: true, download: plan !== undefined });
  if (source.kind !== 'download') return findTemporalBinary({ log: opts.log, tools });
  opts.log?.(`Go is not installed: downloading the Temporal CLI into ${tools.toolCacheDir} (one time)…`);
  try {
    return await downloadTemporalCli(plan!);
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    throw new Error(cliMissingMessage(tools.toolCacheDir, e.cause?.code ?? e.cause?.message ?? e.message), {
      cause: err,
    });
  }
}
