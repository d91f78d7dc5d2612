import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';
import { billingCli } from '../helpers/billing-cli';

/** The `billing` command as CI runs it, configured by the environment only. */
function billing(args: string[], env: Record<string, string>) {
  const runEnv: NodeJS.ProcessEnv = {
    ...process.env,
    BILLING_SECRET_KEY: 'sk_test_secret_never_on_the_wire',
    ...env,
  };
  if (!('BILLING_ALLOW_INSECURE' in env)) delete runEnv.BILLING_ALLOW_INSECURE;
  delete runEnv.GITHUB_ACTIONS;
  return billingCli(args, { env: runEnv, cwd: ROOT_DIR });
}

/** This machine's first non-loopback IPv4 address: a host the key would cross a network to reach. */
const lanAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

/**
 * Issue 42 (low): `npx billing` sent the secret key over plain http to any host. Now http:// is
 * refused before any request unless the host is this machine (127.0.0.0/8, ::1, localhost) or
 * `--insecure` / `BILLING_ALLOW_INSECURE=1` says so. A stand-in API on every address records what
 * reaches it, so "refused" means the key never left.
 */
describe('billing refuses plain http to another host', { timeout: 90_000 }, () => {
  let server: http.Server;
  let port: number;
  const seen: { url: string; authorization?: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ providers: [] }));
    });
    await new Promise<void>((r) => server.listen(0, '0.0.0.0', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it.skipIf(!lanAddress)('http:// to a non-loopback address: refused with exit 1, nothing sent', async () => {
    const url = `http://${lanAddress}:${port}/v1`;
    const before = seen.length;
    const run = await billing(['readiness'], { BILLING_API_URL: url });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/error: insecure_url: .*plain http.*--insecure.*BILLING_ALLOW_INSECURE=1/s);
    expect(run.stderr).not.toContain('sk_test_secret');
    expect(seen.length).toBe(before);
  });

  it.skipIf(!lanAddress)('--insecure, or BILLING_ALLOW_INSECURE=1, lets it through', async () => {
    const url = `http://${lanAddress}:${port}/v1`;
    const [flag, flagFirst, envVar] = await Promise.all([
      billing(['readiness', '--insecure'], { BILLING_API_URL: url }),
      billing(['--insecure', 'readiness', '--json'], { BILLING_API_URL: url }),
      billing(['readiness'], { BILLING_API_URL: url, BILLING_ALLOW_INSECURE: '1' }),
    ]);
    for (const run of [flag, flagFirst, envVar]) expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(seen.filter((s) => s.url === '/v1/readiness')).toHaveLength(3);
    expect(seen.every((s) => s.authorization === 'Bearer sk_test_secret_never_on_the_wire')).toBe(true);
  });

  it('loopback over http needs no flag: 127.0.0.1, another 127/8 address, localhost', async () => {
    const runs = await Promise.all(
      [`http://127.0.0.1:${port}/v1`, `http://127.0.0.2:${port}/v1`, `http://localhost:${port}/v1`].map((url) =>
        billing(['readiness'], { BILLING_API_URL: url }),
      ),
    );
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0 });
  });

  it('a value other than 1 does not allow it; https is never refused by this rule', async () => {
    const [zero, tls] = await Promise.all([
      billing(['readiness'], { BILLING_API_URL: 'http://billing.example.com/v1', BILLING_ALLOW_INSECURE: '0' }),
      billing(['readiness'], { BILLING_API_URL: `https://127.0.0.1:${port}/v1` }),
    ]);
    expect(zero.code).toBe(1);
    expect(zero.stderr).toContain('error: insecure_url:');
    expect(tls.code).toBe(1);
    expect(tls.stderr).toContain('error: unreachable:');
  });
});
