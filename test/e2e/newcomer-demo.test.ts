import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { PROVIDERS } from '../../domain/providers';
import { ROOT_DIR } from '../../runtime/config';
import { freePort } from '../../runtime/ports';
import { freshStartEnv, isAlive, withChildLogs } from '../helpers/fresh-start';
import { launchBrowser } from './helpers/browser';
import { startReceiver, type TestReceiver } from '../outbound/receiver';

/**
 * The README's path, exactly as a newcomer takes it, as real processes: `npm start` (its own
 * ports and data dir), then at once `npm run example:web` against it, then in Chromium: the
 * page says free, Subscribe opens psp_a's hosted checkout, Pay, the tab closes, the page says
 * premium. Nothing is prepared behind the demo's back: the webhook endpoint and the catalogue
 * are what `npm start` itself set up. The service agrees (GET /v1/sdk/subscribers). And the
 * README's webhook endpoint (its curl, with the switch that lets a local receiver in) hears the
 * purchase from `npm start`'s own outbound worker, signed.
 *
 * Heavy (a whole `npm start` plus a browser): the suite has no cross-file serialisation, so
 * this file keeps to one test and cleans up every process group it started.
 */
const APP_USER = 'web-example-user'; // examples/web/main.ts's default: the newcomer sets nothing
const ARTIFACTS = path.resolve('test-artifacts/e2e-newcomer-demo');

interface Running {
  proc: ChildProcess;
  out: () => string;
  exit: Promise<number | null>;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Running {
  // Its own process group, so the whole tree (npm → tsx → node, and start.ts's children) is stopped together.
  const proc = spawn(cmd, args, { cwd: ROOT_DIR, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  proc.stdout!.on('data', (d) => (text += d));
  proc.stderr!.on('data', (d) => (text += d));
  const exit = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return { proc, out: () => text, exit };
}

/** Resolves when the output shows `needle`; rejects, with the output, if the process ends first or time runs out. */
function waitForOutput(r: Running, needle: RegExp, timeoutMs: number, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const t = setInterval(() => {
      const m = needle.exec(r.out());
      if (m) {
        clearInterval(t);
        resolve(m);
      } else if (Date.now() - started > timeoutMs) {
        clearInterval(t);
        reject(new Error(`${what}: no ${needle} within ${timeoutMs} ms:\n${r.out()}`));
      }
    }, 200);
    void r.exit.then((code) => {
      clearInterval(t);
      const m = needle.exec(r.out());
      if (m) resolve(m);
      else reject(new Error(`${what} exited (${code}) before ${needle}:\n${withChildLogs(r.out())}`));
    });
  });
}

const alive = isAlive;

async function stopGroup(r: Running | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!r?.proc.pid || r.proc.exitCode !== null || r.proc.signalCode) return;
  try {
    process.kill(-r.proc.pid, signal);
  } catch {
    return; // already gone
  }
  await Promise.race([r.exit, new Promise((res) => setTimeout(res, 30_000))]);
  try {
    process.kill(-r.proc.pid, 'SIGKILL');
  } catch {
    /* stopped in time */
  }
}

describe('the newcomer demo: npm start, example:web, Subscribe, Pay, premium', () => {
  const { dataDir, env } = freshStartEnv('billing-newcomer-');
  let start: Running | undefined;
  let example: Running | undefined;
  let browser: Browser | undefined;
  let receiver: TestReceiver | undefined;

  afterAll(async () => {
    await receiver?.close();
    // What the newcomer's two terminals showed, for reading a failure.
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.writeFileSync(path.join(ARTIFACTS, 'npm-start.txt'), start?.out() ?? '');
    fs.writeFileSync(path.join(ARTIFACTS, 'example-web.txt'), example?.out() ?? '');
    await browser?.close().catch(() => undefined);
    await stopGroup(example, 'SIGTERM');
    // Ctrl-C, as the newcomer would; start.ts stops its children, then anything left is killed.
    const owned = fs.existsSync(path.join(dataDir, 'processes.json'))
      ? (JSON.parse(fs.readFileSync(path.join(dataDir, 'processes.json'), 'utf8')) as Record<string, number>)
      : {};
    await stopGroup(start, 'SIGINT');
    for (const deadline = Date.now() + 30_000; Date.now() < deadline && Object.values(owned).some(alive);)
      await new Promise((r) => setTimeout(r, 250));
    for (const pid of Object.values(owned)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  it('sells from the first start, with nothing set up by hand', async () => {
    const ports: Record<string, string> = {};
    for (const name of [
      'API_PORT',
      'DASHBOARD_PORT',
      'TOOLS_PORT',
      'TEMPORAL_PORT',
      'TEMPORAL_UI_PORT',
      'EMBEDDED_PG_PORT',
      'EXAMPLE_PORT',
      ...PROVIDERS.map((p) => `${p.toUpperCase()}_EMULATOR_PORT`),
    ]) {
      ports[name] = String(await freePort());
    }
    // A newcomer's backend on this machine is a local address: the documented switch lets it in.
    const withPorts = { ...env, ...ports, OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: '1' };

    start = run('npm', ['start'], withPorts);
    await waitForOutput(start, /Billing service is up/, 240_000, 'npm start');
    const banner = start.out();
    const publishableKey = /Publishable key\s+(\S+)/.exec(banner)![1];
    expect(banner).toMatch(/Webhook URLs\s+registered at psp_a/);
    expect(banner).toMatch(/Demo catalogue\s+syncing to the emulators in the background/);

    // The README's "push every entitlement change to your backend": its curl, with the banner's secret key.
    receiver = await startReceiver();
    const secretKey = /Secret key\s+(\S+)/.exec(banner)![1];
    const made = await fetch(`http://127.0.0.1:${ports.API_PORT}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(made.status).toBe(200);
    const { secret: signingSecret } = (await made.json()) as { secret: string };

    // Right away, as the README says: the example waits for the demo to be sellable by itself.
    example = run('npm', ['run', 'example:web'], withPorts);
    const [, exampleUrl] = await waitForOutput(
      example,
      /Example web app: (http:\/\/\S+)/,
      200_000,
      'npm run example:web',
    );

    fs.mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launchBrowser();
    const context = await browser.newContext();
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.goto(exampleUrl);
    await expect
      .poll(
        async () => ({
          status: await page.textContent('#status'),
          error: await page.textContent('#error'),
          pageErrors,
        }),
        { timeout: 15_000 },
      )
      .toEqual({ status: 'free', error: '', pageErrors: [] });
    await page.screenshot({ path: path.join(ARTIFACTS, '1-free.png') });

    const [tab] = await Promise.all([page.waitForEvent('popup'), page.click('#subscribe')]);
    await tab.waitForSelector('#pay', { timeout: 15_000 });
    expect(new URL(tab.url()).origin).toBe(`http://127.0.0.1:${ports.PSP_A_EMULATOR_PORT}`); // psp_a's hosted page
    await tab.screenshot({ path: path.join(ARTIFACTS, '2-hosted-checkout.png') });
    const closed = tab.waitForEvent('close', { timeout: 20_000 });
    await tab.click('#pay');
    // "Payment succeeded", not "Payment failed — No webhook endpoint is registered for this account".
    // Only the success page closes itself (500 ms after it shows): on a loaded machine the tab can
    // be gone before the selector is seen, and that too says it succeeded.
    await tab.waitForSelector('#paid', { timeout: 15_000 }).catch(async () => {
      if (tab.isClosed()) return;
      throw new Error(`the hosted checkout did not succeed: ${await tab.textContent('body')}`);
    });
    await closed;

    await expect.poll(() => page.textContent('#status'), { timeout: 45_000 }).toBe('premium');
    await page.screenshot({ path: path.join(ARTIFACTS, '3-premium.png') });
    expect(await page.textContent('#error')).toBe('');

    const res = await fetch(`http://127.0.0.1:${ports.API_PORT}/v1/sdk/subscribers/${APP_USER}`, {
      headers: { authorization: `Bearer ${publishableKey}` },
    });
    expect(res.status).toBe(200);
    const subscriber = (await res.json()) as {
      is_premium: boolean;
      mode: string;
      entitlements: { provider: string; sku: string | null; is_active: boolean }[];
    };
    expect(subscriber.is_premium).toBe(true);
    expect(subscriber.mode).toBe('test');
    expect(subscriber.entitlements).toContainEqual(
      expect.objectContaining({ provider: 'psp_a', sku: 'premium_monthly', is_active: true }),
    );
    // The tenant's backend heard it, signed with the endpoint's secret (the standardwebhooks library verifies).
    const heard = () =>
      receiver!.received.map(
        (r) => receiver!.verify(r, signingSecret) as { type: string; data: { app_user_id?: string } },
      );
    await expect
      .poll(() => heard().some((e) => e.type === 'entitlement.active' && e.data.app_user_id === APP_USER), {
        timeout: 60_000,
      })
      .toBe(true);
    // npm start's own line about its background sync (the run may finish after psp_a's link exists).
    await expect
      .poll(() => start!.out(), { timeout: 120_000 })
      .toMatch(/\[start\] Demo catalogue synced to the emulators: \d+ product\/provider pairs written/);
    await context.close();
  }, 600_000);
});
