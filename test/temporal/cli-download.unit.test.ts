import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseCliSource, cliMissingMessage } from '../../temporal/binary';
import { cliDownloadPlan, CliDownloadUnsupported, downloadTemporalCli } from '../../temporal/cli-download';
import { tarGz } from '../../runtime/tarball';

const allowAll = { build: true, download: true };

describe('where the Temporal CLI comes from', () => {
  it('a binary already there wins: TEMPORAL_CLI, then the cache (built, then downloaded), then PATH', () => {
    const all = {
      explicit: '/x/temporal',
      built: '/c/temporal',
      downloaded: '/c/dl',
      onPath: '/usr/bin/temporal',
      go: '/go',
    };
    expect(chooseCliSource(all, allowAll)).toEqual({ kind: 'use', path: '/x/temporal' });
    expect(chooseCliSource({ ...all, explicit: undefined }, allowAll)).toEqual({ kind: 'use', path: '/c/temporal' });
    expect(chooseCliSource({ downloaded: '/c/dl', onPath: '/usr/bin/temporal' }, allowAll)).toEqual({
      kind: 'use',
      path: '/c/dl',
    });
    expect(chooseCliSource({ onPath: '/usr/bin/temporal' }, allowAll)).toEqual({
      kind: 'use',
      path: '/usr/bin/temporal',
    });
  });

  it('none there: built with Go when Go is present, downloaded where it is absent', () => {
    expect(chooseCliSource({ go: '/usr/local/go/bin/go' }, allowAll)).toEqual({
      kind: 'build',
      go: '/usr/local/go/bin/go',
    });
    expect(chooseCliSource({}, allowAll)).toEqual({ kind: 'download' });
    // Callers that may neither build nor download get nothing, and say how to get it.
    expect(chooseCliSource({}, { build: false, download: false })).toEqual({ kind: 'none' });
    expect(chooseCliSource({ go: '/go' }, { build: false, download: true })).toEqual({ kind: 'none' });
  });

  it('asks temporal.download as @temporalio/testing does, for this platform and SDK version, cached per version', () => {
    const plan = cliDownloadPlan({ platform: 'linux', arch: 'x64', sdkVersion: '1.24.0', cacheDir: '/cache' });
    const url = new URL(plan.infoUrl);
    expect(url.origin + url.pathname).toBe('https://temporal.download/cli/default');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      arch: 'amd64',
      platform: 'linux',
      format: 'tar.gz',
      'sdk-name': 'sdk-typescript',
      'sdk-version': '1.24.0',
    });
    expect(plan.dest).toBe('/cache/temporal-sdk-typescript-1.24.0');
    expect(
      new URL(
        cliDownloadPlan({ platform: 'darwin', arch: 'arm64', sdkVersion: '1', cacheDir: '/c' }).infoUrl,
      ).searchParams.get('arch'),
    ).toBe('arm64');
    expect(() => cliDownloadPlan({ platform: 'win32', arch: 'x64', sdkVersion: '1', cacheDir: '/c' })).toThrow(
      CliDownloadUnsupported,
    );
    expect(() => cliDownloadPlan({ platform: 'linux', arch: 'ia32', sdkVersion: '1', cacheDir: '/c' })).toThrow(
      /linux\/ia32/,
    );
  });

  it('the error text names the failed download and every other way', () => {
    const text = cliMissingMessage('/home/me/.cache/billing-tools/bin', 'ENOTFOUND');
    expect(text).toMatch(/downloading it from https:\/\/temporal\.download failed \(ENOTFOUND\)/);
    expect(text).toMatch(
      /go install github\.com\/temporalio\/cli\/cmd\/temporal@v1\.5\.1.*GOBIN=\/home\/me\/\.cache\/billing-tools\/bin/,
    );
    expect(text).toMatch(/PATH.*TEMPORAL_CLI.*TEMPORAL_ADDRESS/);
    expect(cliMissingMessage('/c')).not.toMatch(/download/);
  });
});

/** The download itself, against a local server speaking temporal.download's two answers (the real one is unreachable here). */
describe('downloading the Temporal CLI', () => {
  let server: http.Server;
  let root: string;
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-download-'));
  const binary = Buffer.from('#!/bin/sh\necho temporal version 1.5.1\n');
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url!, root);
      if (url.pathname === '/cli/default') {
        res.setHeader('content-type', 'application/json');
        const file = url.searchParams.get('sdk-version') === 'missing' ? 'nothing-here' : 'temporal';
        return res.end(
          JSON.stringify({ archiveUrl: `${root}/archive/temporal_cli_linux_amd64.tar.gz`, fileToExtract: file }),
        );
      }
      if (url.pathname === '/archive/temporal_cli_linux_amd64.tar.gz')
        return res.end(
          tarGz([
            { path: 'LICENSE', body: Buffer.from('MIT') },
            { path: 'temporal', body: binary },
          ]),
        );
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.close();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  it('extracts the named file into the cache, executable', async () => {
    const plan = cliDownloadPlan({ platform: 'linux', arch: 'x64', sdkVersion: '1.24.0', cacheDir, root });
    expect(await downloadTemporalCli(plan)).toBe(plan.dest);
    expect(fs.readFileSync(plan.dest)).toEqual(binary);
    expect(fs.statSync(plan.dest).mode & 0o111).not.toBe(0);
    expect(fs.readdirSync(cacheDir)).toEqual(['temporal-sdk-typescript-1.24.0']); // no partial file left
  });

  it('fails clearly: a file missing from the archive, an unreachable host', async () => {
    const missing = cliDownloadPlan({ platform: 'linux', arch: 'x64', sdkVersion: 'missing', cacheDir, root });
    await expect(downloadTemporalCli(missing)).rejects.toThrow(/nothing-here is not in .*tar\.gz/);
    const closed = cliDownloadPlan({
      platform: 'linux',
      arch: 'x64',
      sdkVersion: '1',
      cacheDir,
      root: 'http://127.0.0.1:9',
    });
    await expect(downloadTemporalCli(closed)).rejects.toThrow(/fetch failed/);
    expect(fs.existsSync(missing.dest)).toBe(false);
  });
});
