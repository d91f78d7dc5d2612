import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { PROVIDERS } from '../../domain/providers';
import { ROOT_DIR } from '../../runtime/config';
import { freePort, isPortOpen } from '../../runtime/ports';
import { freshStartEnv, isAlive, withChildLogs } from '../helpers/fresh-start';
import { call } from '../helpers/api';
import { until } from '../helpers/until';
import { processResult } from '../helpers/cli-run';
import { PRIORITY } from '../../runtime/process-priority';
import { openExampleOnFreePlan } from '../e2e/helpers/example-page';
import { EXAMPLE_WAIT_DEFAULT_MS } from '../../examples/web/sellable';
import { DEMO_SYNC_TIMEOUT_MS } from '../../seed/demo-sync';
import { launchBrowser, screenshot } from '../e2e/helpers/browser';
import { startReceiver, type TestReceiver } from '../outbound/receiver';

/**
 * `npm start` from nothing, exactly as the README says it (the workers bundle the workflow code
 * from sources): embedded Postgres, the Temporal dev server with its UI, the emulators, both
 * workers and listeners. On that first start, right away, the newcomer's demo: `npm run
 * example:web`, then in Chromium the page says free, Subscribe opens psp_a's hosted checkout, Pay,
 * the tab closes, the page says premium; nothing is prepared behind the demo's back (the webhook
 * endpoint and the catalogue are what `npm start` itself set up), the service agrees, and the
 * README's webhook endpoint hears the purchase, signed. Ctrl-C stops every child; a second start
 * has the same data, and SIGTERM to the `npm start` process alone (a supervisor's stop) stops
 * every child too. One start serves both stories: each start is seconds of CPU in six processes.
 */
const APP_USER = 'web-example-user'; // examples/web/main.ts's default: the newcomer sets nothing
const ARTIFACTS = path.resolve('test-artifacts/newcomer-demo');

describe('npm start', () => {
  const { dataDir, env } = freshStartEnv('billing-start-', { sharedBundle: false });
  let running: ChildProcess | undefined;
  let example: ChildProcess | undefined;
  let browser: Browser | undefined;
  let receiver: TestReceiver | undefined;
  const outputs: Record<string, () => string> = {};

  afterAll(async () => {
    // What the newcomer's two terminals showed, for reading a failure.
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    for (const [name, out] of Object.entries(outputs)) fs.writeFileSync(path.join(ARTIFACTS, `${name}.txt`), out());
    await browser?.close().catch(() => undefined);
    await receiver?.close();
    for (const proc of [example, running])
      try {
        if (proc?.pid && proc.exitCode === null) process.kill(-proc.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
  });

  function start(
    extra: NodeJS.ProcessEnv = {},
  ): Promise<{ proc: ChildProcess; out: () => string; up: Promise<void>; exit: Promise<number | null> }> {
    const proc = spawn('npm', ['start'], {
      cwd: ROOT_DIR,
      env: { ...env, ...extra },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running = proc;
    let text = '';
    outputs['npm-start'] = () => text;
    proc.stdout!.on('data', (d) => (text += d));
    proc.stderr!.on('data', (d) => (text += d));
    const exit = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    const up = new Promise<void>((resolve, reject) => {
      const t = setInterval(() => {
        if (text.includes('Billing service is up')) {
          clearInterval(t);
          resolve();
        }
      }, 200);
      void exit.then((code) => {
        clearInterval(t);
        reject(new Error(`npm start exited (${code}) before it was up:\n${withChildLogs(text)}`));
      });
    });
    up.catch(() => {});
    return Promise.resolve({ proc, out: () => text, up, exit });
  }

  /** Every directory and regular file under the data dir with its mode (symlinks and sockets aside). */
  function modes(dir: string, rel = ''): [string, number][] {
    const out: [string, number][] = [];
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const at = path.join(rel, e.name);
      if (!e.isDirectory() && !e.isFile()) continue;
      out.push([at, fs.lstatSync(path.join(dir, at)).mode & 0o777]);
      if (e.isDirectory()) out.push(...modes(dir, at));
    }
    return out;
  }
  /** Owner-only (issue 42): the top 0700 (0711 as root, for the embedded Postgres's own user), directories 0700, files 0600. */
  function expectPrivate(dir: string) {
    expect(fs.lstatSync(dir).mode & 0o777).toBe(process.getuid!() === 0 ? 0o711 : 0o700);
    const found = modes(dir);
    for (const f of ['master.key', 'demo-login.json', 'api.log', 'temporal.db', 'temporal.log', 'emulators/psp_a.json'])
      expect(found.map(([p]) => p)).toContain(f);
    expect(found.filter(([p, m]) => m !== (fs.lstatSync(path.join(dir, p)).isDirectory() ? 0o700 : 0o600))).toEqual([]);
  }

  const field = (text: string, label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(text)?.[1];
  const alive = isAlive;

  it('the example waits for the demo as long as npm start gives its first sync, so it never gives up on a sync still running', () => {
    expect(EXAMPLE_WAIT_DEFAULT_MS).toBeGreaterThanOrEqual(DEMO_SYNC_TIMEOUT_MS);
  });

  it('refuses to start in production without MASTER_KEY, naming the variable', async () => {
    const s = await start({ NODE_ENV: 'production' });
    expect(await s.exit).not.toBe(0);
    expect(s.out()).toContain('MASTER_KEY');
    expect(fs.existsSync(path.join(dataDir, 'postgres'))).toBe(false);
  });

  it('comes up on embedded defaults and sells from the first start with nothing set up by hand; stops every child on Ctrl-C, and comes back with the same data', async () => {
    const ports: Record<string, number> = {};
    for (const name of [
      'API_PORT',
      'DASHBOARD_PORT',
      'TOOLS_PORT',
      'TEMPORAL_PORT',
      'TEMPORAL_UI_PORT',
      'EMBEDDED_PG_PORT',
      ...PROVIDERS.map((p) => `${p.toUpperCase()}_EMULATOR_PORT`),
    ]) {
      ports[name] = await freePort();
    }
    const portEnv = Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)]));
    // A newcomer's backend on this machine is a local address: the documented switch lets it in.
    const newcomerEnv = { EXAMPLE_PORT: String(await freePort()), OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: '1' };

    const first = await start({ ...portEnv, ...newcomerEnv });
    await first.up;
    // Right away, as the README says: the example waits for the demo to be sellable by itself.
    await newcomerBuys({ ...portEnv, ...newcomerEnv }, first.out());
    const out1 = first.out();
    expect(out1).toContain('generated a development key');
    const tenantId = field(out1, 'Demo tenant')!;
    const key = field(out1, 'Secret key')!;
    expect(key).toMatch(/^sk_/);
    for (const p of [ports.API_PORT, ports.DASHBOARD_PORT, ports.TOOLS_PORT]) {
      const r = await call(`http://127.0.0.1:${p}`, '/readyz');
      expect(r.body).toEqual({ status: 'ready' });
    }
    const ui = await fetch(`http://127.0.0.1:${ports.TEMPORAL_UI_PORT}/`);
    expect(ui.status).toBe(200);
    const products = await call(`http://127.0.0.1:${ports.API_PORT}/v1`, '/products', key);
    expect(products.body.data.length).toBeGreaterThan(0);
    const providers = await call(`http://127.0.0.1:${ports.DASHBOARD_PORT}/v1`, '/providers', key);
    expect(providers.body.data).toHaveLength(PROVIDERS.length);

    const owned = JSON.parse(fs.readFileSync(path.join(dataDir, 'processes.json'), 'utf8')) as Record<string, number>;
    expect(Object.keys(owned).sort()).toEqual([
      'api',
      'emulators',
      'outbound-worker',
      'postgres',
      'temporal',
      'worker',
    ]);
    for (const pid of Object.values(owned)) expect(alive(pid)).toBe(true);
    // The engine yields the CPU to the api, which makes the buyer premium; deliveries' own worker yields to both
    // (runtime/process-priority.ts). Every thread of each: a nice value is per thread on Linux.
    await expect
      .poll(() => fs.readFileSync(path.join(dataDir, 'outbound-worker.log'), 'utf8'), {
        timeout: 120_000,
        interval: 500,
      })
      .toContain('outbound worker started');
    const threads = (pid: number) => fs.readdirSync(`/proc/${pid}/task`).map((t) => os.getPriority(Number(t)));
    const base = os.getPriority();
    expect(new Set(threads(owned['outbound-worker']))).toEqual(new Set([Math.max(base, PRIORITY.outbound)]));
    expect(new Set(threads(owned.worker))).toEqual(new Set([Math.max(base, PRIORITY.engine)]));
    expect(new Set(threads(owned.temporal))).toEqual(new Set([Math.max(base, PRIORITY.engine)]));
    expect(os.getPriority(owned.api)).toBe(base);
    // Ready to sell: the service's webhook URL registered at psp_a, the catalogue synced in the background.
    expect(out1).toMatch(/Webhook URLs\s+registered at psp_a/);
    expect(out1).toMatch(/Demo catalogue\s+syncing to the emulators in the background/);
    await expect
      .poll(() => first.out(), { timeout: 180_000, interval: 500 })
      .toMatch(/\[start\] Demo catalogue (synced|sync failed)[^\n]*/);
    expect(/\[start\] Demo catalogue (synced|sync failed)[^\n]*/.exec(first.out())![0]).toMatch(
      /synced to the emulators: \d+ product\/provider pairs written/,
    );
    const endpoints = async () =>
      (
        (await (await fetch(`http://127.0.0.1:${ports.PSP_A_EMULATOR_PORT}/__control/state`)).json()) as {
          webhook_endpoints?: { url: string }[];
        }
      ).webhook_endpoints;
    expect(await endpoints()).toEqual([
      expect.objectContaining({ url: `http://127.0.0.1:${ports.DASHBOARD_PORT}/api/webhooks/psp_a` }),
    ]);

    process.kill(-first.proc.pid!, 'SIGINT'); // what a terminal's Ctrl-C does: the whole process group
    await first.exit;
    // npm itself may return before its children finish their own graceful shutdown.
    for (const deadline = Date.now() + 30_000; Date.now() < deadline && Object.values(owned).some(alive);) {
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const [name, pid] of Object.entries(owned)) expect([name, alive(pid)]).toEqual([name, false]);
    // A fresh start left everything owner-only; an install from before (0755/0644) is fixed at the next start,
    // before the embedded Postgres (which refuses a data directory others can read) starts on it.
    expectPrivate(dataDir);
    for (const [p] of modes(dataDir))
      fs.chmodSync(path.join(dataDir, p), fs.lstatSync(path.join(dataDir, p)).isDirectory() ? 0o755 : 0o644);
    fs.chmodSync(dataDir, 0o755);

    const second = await start({ ...portEnv, ...newcomerEnv });
    await second.up;
    const out2 = second.out();
    expect(out2).not.toContain('generated a development key');
    expect(field(out2, 'Demo tenant')).toBe(tenantId);
    expect(field(out2, 'Secret key')).toBe(key);
    // Already synced, and the endpoint (kept in the emulator's state) is not registered twice.
    expect(out2).toMatch(/Demo catalogue\s+synced: the example can sell/);
    expect(await endpoints()).toHaveLength(1);
    const again = await call(`http://127.0.0.1:${ports.API_PORT}/v1`, '/products', key);
    expect(again.body.data.map((p: any) => p.id)).toEqual(products.body.data.map((p: any) => p.id));
    // The CI client against what npm start runs, as docs/ci.md shows it: pull, then plan that file.
    const billing = (args: string[]) =>
      processResult('npx', ['--no-install', 'billing', ...args], {
        cwd: ROOT_DIR,
        env: { ...process.env, BILLING_API_URL: `http://127.0.0.1:${ports.API_PORT}/v1`, BILLING_SECRET_KEY: key },
      });
    const pulled = await billing(['catalogue', 'pull']);
    expect(pulled.code, pulled.stderr).toBe(0);
    for (const p of again.body.data) expect(pulled.stdout).toContain(`sku: ${p.sku}`);
    fs.writeFileSync(path.join(dataDir, 'catalogue.yaml'), pulled.stdout);
    const plan = await billing(['catalogue', 'plan', '-f', path.join(dataDir, 'catalogue.yaml')]);
    expect(plan.code, plan.stdout + plan.stderr).not.toBe(1);
    expect(plan.stdout).toMatch(/^Plan: 0 catalogue changes|^Nothing to do\./m);
    const providers2 = await call(`http://127.0.0.1:${ports.API_PORT}/v1`, '/providers', key);
    expect(providers2.body.data.map((c: any) => c.id).sort()).toEqual(providers.body.data.map((c: any) => c.id).sort());
    fs.rmSync(path.join(dataDir, 'catalogue.yaml')); // the test's own file, not the start's
    expectPrivate(dataDir);
    const owned2 = JSON.parse(fs.readFileSync(path.join(dataDir, 'processes.json'), 'utf8')) as Record<string, number>;
    // A supervisor's stop (Docker, pm2, `kill <pid>`): SIGTERM to the process `npm start` is, alone,
    // not to its group; every child goes, and every port it listened on closes.
    process.kill(second.proc.pid!, 'SIGTERM');
    await second.exit;
    const listening = async () =>
      (await Promise.all(Object.entries(ports).map(async ([n, p]) => [n, await isPortOpen('127.0.0.1', p)] as const)))
        .filter(([, open]) => open)
        .map(([n]) => n);
    for (
      const deadline = Date.now() + 30_000;
      Date.now() < deadline && (Object.values(owned2).some(alive) || (await listening()).length > 0);
    ) {
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const [name, pid] of Object.entries(owned2)) expect([name, alive(pid)]).toEqual([name, false]);
    expect(await listening()).toEqual([]);
  }, 900_000);

  /** The README's demo on the running start, as real processes: example:web, then Subscribe and Pay in Chromium. */
  async function newcomerBuys(ports: Record<string, string>, banner: string) {
    const api = `http://127.0.0.1:${ports.API_PORT}`;
    const publishableKey = field(banner, 'Publishable key')!;
    expect(banner).toMatch(/Webhook URLs\s+registered at psp_a/);
    expect(banner).toMatch(/Demo catalogue\s+syncing to the emulators in the background/);

    // The README's "push every entitlement change to your backend": its curl, with the banner's secret key.
    receiver = await startReceiver();
    const made = await fetch(`${api}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${field(banner, 'Secret key')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(made.status).toBe(200);
    const { secret: signingSecret } = (await made.json()) as { secret: string };

    const ex = spawn('npm', ['run', 'example:web'], {
      cwd: ROOT_DIR,
      env: { ...env, ...ports },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    example = ex;
    let exampleText = '';
    outputs['example-web'] = () => exampleText;
    ex.stdout!.on('data', (d) => (exampleText += d));
    ex.stderr!.on('data', (d) => (exampleText += d));
    const shown = await until(
      'npm run example:web prints its URL',
      async () => (ex.exitCode !== null ? 'exited' : exampleText),
      (t) => t === 'exited' || /Example web app: (http:\/\/\S+)/.test(t),
      // The example's own wait for npm start's first sync, and a minute for its SDK build.
      EXAMPLE_WAIT_DEFAULT_MS + 60_000,
    );
    if (shown === 'exited') throw new Error(`npm run example:web exited (${ex.exitCode}):\n${exampleText}`);
    const exampleUrl = /Example web app: (http:\/\/\S+)/.exec(shown)![1];

    fs.mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launchBrowser();
    const context = await browser.newContext();
    const page = await context.newPage();
    await openExampleOnFreePlan(page, exampleUrl);
    await screenshot(page, '1-free', { dir: ARTIFACTS, fullPage: false });

    const [tab] = await Promise.all([page.waitForEvent('popup'), page.click('#subscribe')]);
    await tab.waitForSelector('#pay', { timeout: 15_000 });
    expect(new URL(tab.url()).origin).toBe(`http://127.0.0.1:${ports.PSP_A_EMULATOR_PORT}`); // psp_a's hosted page
    await screenshot(tab, '2-hosted-checkout', { dir: ARTIFACTS, fullPage: false });
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
    await screenshot(page, '3-premium', { dir: ARTIFACTS, fullPage: false });
    expect(await page.textContent('#error')).toBe('');

    const res = await fetch(`${api}/v1/sdk/subscribers/${APP_USER}`, {
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
    await context.close();
    await browser.close();
    browser = undefined;
    // The example's terminal: Ctrl-C.
    process.kill(-ex.pid!, 'SIGINT');
    await new Promise((r) => (ex.exitCode !== null ? r(null) : ex.once('exit', r)));
  }
});
