import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoTenant } from '../../seed/demo';
import { testDb } from '../helpers/db';
import { listen, newTenant, startApi } from '../helpers/api';
import { processResult } from '../helpers/cli-run';

const BASELINE = path.join(__dirname, 'conformance-baseline.yml');
const CLI = path.join(__dirname, '../../node_modules/@modelcontextprotocol/conformance/dist/index.js');

/**
 * The MCP project's own conformance suite (@modelcontextprotocol/conformance, server mode)
 * against our tool server. The CLI has no option for request headers, so a ten-line proxy adds
 * the tenant's bearer key, exactly as a header-capable client or `mcp-remote --header` would.
 * Scenarios that exercise the reference server's own test fixtures (tools named
 * `test_simple_text`, prompts, resources, …) are listed in the baseline with the reason each
 * cannot apply; the CLI fails on any other failure and on a baseline entry that started passing.
 */
/** What each failing check said, from the CLI's per-scenario checks.json files. */
function failedChecks(dir: string): string {
  const lines: string[] = [];
  for (const scenario of fs.readdirSync(dir)) {
    const file = path.join(dir, scenario, 'checks.json');
    if (!fs.existsSync(file)) continue;
    for (const c of JSON.parse(fs.readFileSync(file, 'utf8')) as Array<{
      id: string;
      status: string;
      errorMessage?: string;
    }>) {
      if (c.status === 'FAILURE') lines.push(`${scenario}: ${c.id}: ${c.errorMessage ?? ''}`);
    }
  }
  return lines.join('\n');
}

describe('MCP conformance suite (server mode)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let proxy: Awaited<ReturnType<typeof listen>>;
  let outDir: string;

  beforeAll(async () => {
    api = await startApi();
    const t = await newTenant('conformance');
    await seedDemoTenant(testDb(), t.tenant_id);
    const target = new URL(`${api.toolsUrl}/`);
    proxy = await listen((req, res) => {
      const upstream = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: req.method,
          headers: { ...req.headers, host: target.host, authorization: `Bearer ${t.secret_key}` },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-'));
  });
  afterAll(async () => {
    await proxy?.close();
    await api?.close();
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  it('passes every applicable scenario, and the baseline lists only what cannot apply', async () => {
    const run = await processResult(
      process.execPath,
      [CLI, 'server', '--url', `${proxy.url}/`, '--expected-failures', BASELINE, '--output-dir', outDir],
      { timeout: 150_000, maxBuffer: 16 * 1024 * 1024 },
    );
    const result = { code: run.code, out: `${run.stdout}\n${run.stderr}` };
    if (result.code !== 0) console.error(result.out, failedChecks(outDir));
    expect(result.code).toBe(0);
    // The run really exercised our server: the core scenarios passed with no failed check (summary lines "✓ name: N passed, 0 failed").
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'])
      expect(result.out).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
  }, 180_000);
});
