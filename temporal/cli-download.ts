import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

/**
 * The Temporal CLI fetched as `@temporalio/testing` fetches its ephemeral server (the SDK core's
 * `EphemeralExe::CachedDownload`): ask `https://temporal.download/cli/default` with the platform,
 * the architecture, `format=tar.gz` and this SDK's name and version for the archive to take and
 * the file in it; extract that file into the per-user cache, named after the SDK version, once.
 * For a machine without Go; the Go build stays the fallback (temporal/binary.ts).
 */
export const TEMPORAL_DOWNLOAD_ROOT = 'https://temporal.download';

export interface CliDownloadPlan {
  /** Where the archive's address is asked for. */
  infoUrl: string;
  /** The cached binary (reused while it exists). */
  dest: string;
}

export class CliDownloadUnsupported extends Error {}

/** The installed Temporal SDK's version: the server it defaults to is the one tested with it. */
export function temporalSdkVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('@temporalio/worker/package.json') as { version: string }).version;
}

export function cliDownloadPlan(p: {
  platform: NodeJS.Platform;
  arch: string;
  sdkVersion: string;
  cacheDir: string;
  root?: string;
}): CliDownloadPlan {
  const platform = p.platform === 'linux' ? 'linux' : p.platform === 'darwin' ? 'darwin' : undefined;
  const arch = p.arch === 'x64' ? 'amd64' : p.arch === 'arm64' || p.arch === 'arm' ? 'arm64' : undefined;
  if (!platform || !arch)
    throw new CliDownloadUnsupported(
      `no Temporal CLI download for ${p.platform}/${p.arch} (linux and macOS, x64 and arm64)`,
    );
  const query = new URLSearchParams({
    arch,
    platform,
    format: 'tar.gz',
    'sdk-name': 'sdk-typescript',
    'sdk-version': p.sdkVersion,
  });
  return {
    infoUrl: `${p.root ?? TEMPORAL_DOWNLOAD_ROOT}/cli/default?${query}`,
    dest: path.join(p.cacheDir, `temporal-sdk-typescript-${p.sdkVersion}`),
  };
}

/** Downloads and extracts the CLI to `plan.dest` (atomically: a partial file is never left under that name). */
export async function downloadTemporalCli(plan: CliDownloadPlan, timeoutMs = 300_000): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs);
  const info = await fetch(plan.infoUrl, { signal });
  if (!info.ok) throw new Error(`${plan.infoUrl} answered ${info.status}`);
  const { archiveUrl, fileToExtract } = (await info.json()) as { archiveUrl?: string; fileToExtract?: string };
  if (typeof archiveUrl !== 'string' || typeof fileToExtract !== 'string')
    throw new Error(`${plan.infoUrl} did not name an archive and a file in it`);
  if (!archiveUrl.endsWith('.tar.gz')) throw new Error(`unsupported archive format: ${archiveUrl}`);
  const archive = await fetch(archiveUrl, { signal });
  if (!archive.ok) throw new Error(`${archiveUrl} answered ${archive.status}`);
  const body = fileInTarGz(Buffer.from(await archive.arrayBuffer()), fileToExtract);
  if (!body) throw new Error(`${fileToExtract} is not in ${archiveUrl}`);
  fs.mkdirSync(path.dirname(plan.dest), { recursive: true });
  const partial = `${plan.dest}.${process.pid}.partial`;
  fs.writeFileSync(partial, body, { mode: 0o755 });
  fs.renameSync(partial, plan.dest);
  return plan.dest;
}

/** One regular file of a gzipped tar (ustar names with their prefix), or undefined. */
export function fileInTarGz(gz: Buffer, name: string): Buffer | undefined {
  const tar = zlib.gunzipSync(gz);
  const text = (b: Buffer) => b.toString('utf8').replace(/\0.*$/s, '');
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) return undefined;
    const size = parseInt(text(header.subarray(124, 136)).trim() || '0', 8);
    const prefix = text(header.subarray(345, 500));
    const entry = (prefix ? `${prefix}/` : '') + text(header.subarray(0, 100));
    const type = text(header.subarray(156, 157));
    if ((type === '0' || type === '') && entry.replace(/^\.\//, '') === name.replace(/^\.\//, ''))
      return Buffer.from(tar.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return undefined;
}
