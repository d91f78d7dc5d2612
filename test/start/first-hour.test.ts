import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { freePort } from '../../runtime/ports';
import {
  bannerField,
  freshPorts,
  freshStartEnv,
  isAlive,
  killGroups,
  startOrchestrator,
  type StartedStack,
} from '../helpers/fresh-start';
import { until } from '../helpers/until';
import { launchBrowser } from '../e2e/helpers/browser';

const run = promisify(execFile);

/**
 * A newcomer's first hour on one `npm start` (its own ports and data dir), started as a process
 * manager would, the orchestrator itself (`node scripts/start.ts`), so a signal can be sent to it
 * alone: the banner's dashboard login opens the overview; the banner's SDK line installs into an
 * empty folder and answers `isPremium()`; an outbound webhook endpoint on loopback is accepted;
 * SIGTERM (first start) and SIGINT (second start, same data: the same login) to the orchestrator
 * alone stop every child, the Temporal dev server and Postgres included.
 */
describe('npm start: the first hour', () => {
  const { dataDir, env } = freshStartEnv('billing-first-hour-');
  const started: ChildProcess[] = [];
  let browser: Browser | undefined;
  const installDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-newcomer-app-'));

  afterAll(async () => {
    await browser?.close();
    killGroups(started);
    fs.rmSync(installDir, { recursive: true, force: true });
  });

  const start = (portEnv: NodeJS.ProcessEnv) => startOrchestrator({ dataDir, env }, portEnv, started);

  /** Signal the orchestrator alone, then every process it owned is gone within the bound. */
  async function stopsEverything(s: StartedStack, signal: NodeJS.Signals) {
    expect(Object.keys(s.owned).sort()).toEqual([
      'api',
      'emulators',
      'outbound-worker',
      'postgres',
      'temporal',
      'worker',
    ]);
    for (const pid of Object.values(s.owned)) expect(isAlive(pid)).toBe(true);
    process.kill(s.proc.pid!, signal);
    await s.exit;
    const left = await until(
      `every child gone after ${signal}`,
      async () => Object.entries(s.owned).filter(([, pid]) => isAlive(pid)),
      (l) => l.length === 0,
      30_000,
    ).catch(() => Object.entries(s.owned).filter(([, pid]) => isAlive(pid)));
    expect(left).toEqual([]);
  }

  it('banner login, SDK line, loopback endpoint; SIGTERM then SIGINT to the orchestrator alone stop every child', async () => {
    const portEnv = await freshPorts();
    const dashboard = `http://127.0.0.1:${portEnv.DASHBOARD_PORT}`;
    const api = `http://127.0.0.1:${portEnv.API_PORT}`;

    const first = await start(portEnv);
    const loginUrl = bannerField(first.banner, 'Dashboard login')!;
    const email = bannerField(first.banner, 'Email')!;
    const password = bannerField(first.banner, 'Password')!;
    expect(loginUrl).toBe(`${dashboard}/login`);
    expect(email).toMatch(/^demo-[0-9a-f]{8}@example\.com$/);
    expect(password.length).toBeGreaterThanOrEqual(24);
    expect(first.banner).toMatch(/Outbound webhooks may go to loopback and private addresses/);

    // The banner's login, in a browser, lands on the overview; the header's name leads back there.
    browser = await launchBrowser();
    const page = await browser.newPage();
    await page.goto(loginUrl);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/overview');
    await expect(page.locator('h1').textContent()).resolves.toBe('Overview');
    await page.getByRole('link', { name: 'Billing service' }).click();
    await page.waitForURL('**/overview');

    // The demo's year of history, written in the background after the banner: every chart has figures.
    expect(first.banner).toMatch(/Demo history\s+a year of generated buyers, being written in the background/);
    await until(
      'the demo history written',
      async () => first.output(),
      (t) => /Demo history (written|failed)/.test(t),
      240_000,
    );
    expect(first.output()).toMatch(/Demo history written/);
    const charts = (await (
      await fetch(`${api}/v1/charts`, {
        headers: { authorization: `Bearer ${bannerField(first.banner, 'Secret key')}` },
      })
    ).json()) as { data: { name: string }[] };
    const figures: Record<string, unknown> = {};
    for (const { name } of charts.data) {
      const r = await fetch(`${api}/v1/charts/${name}`, {
        headers: { authorization: `Bearer ${bannerField(first.banner, 'Secret key')}` },
      });
      const body = (await r.json()) as { series: { values: (number | null)[] }[] };
      expect([name, r.status]).toEqual([name, 200]);
      expect(
        body.series.some((s) => s.values.some((v) => v !== null && v !== 0)),
        `${name} has figures`,
      ).toBe(true);
      figures[name] = body.series;
    }
    expect(Object.keys(figures)).toContain('revenue_by_country');
    await page.goto(`${dashboard}/charts/revenue_by_country`);
    const cells = await page.locator('figure.chart tbody td').allTextContents();
    expect(
      cells.some((c) => /[1-9]/.test(c)),
      'revenue by country drawn with figures',
    ).toBe(true);
    expect(await page.locator('figure.chart svg[role="img"]').count()).toBeGreaterThan(0);
    await page.goto(`${dashboard}/overview`);

    // The SDK line: the same on the Developer API page as in the banner.
    const installLine = /SDK\s+(npm install \S+)/.exec(first.banner)![1];
    expect(installLine).toBe(`npm install ${dashboard}/sdk/billing-service-sdk-2.0.0.tgz`);
    await page.getByRole('link', { name: 'Developer API' }).click();
    await expect(page.locator('code.sdk-install').first().textContent()).resolves.toBe(installLine);

    // As a newcomer: an empty folder, the printed command (no registry reachable: nothing else is fetched).
    await run(
      'npm',
      [
        ...installLine.split(' ').slice(1),
        '--no-audit',
        '--no-fund',
        '--no-update-notifier',
        `--cache=${path.join(installDir, '.npm-cache')}`,
        '--registry=http://127.0.0.1:9/',
      ],
      { cwd: installDir },
    );
    fs.writeFileSync(
      path.join(installDir, 'check.mjs'),
      `import { Billing } from '@billing-service/sdk';
const billing = Billing.configure({ publishableKey: process.argv[2], backend: process.argv[3], appUserId: process.argv[4], platform: 'web' });
console.log(JSON.stringify(await billing.isPremium()));`,
    );
    const publishable = bannerField(first.banner, 'Publishable key')!;
    const premium = async (user: string) =>
      JSON.parse((await run(process.execPath, ['check.mjs', publishable, api, user], { cwd: installDir })).stdout);
    expect(await premium('user_bob')).toBe(true); // the demo's trialing test subscriber
    expect(await premium('newcomer-nobody')).toBe(false);
    // The module for a <script type="module">, readable from an app's own origin.
    const esm = await fetch(`${dashboard}/sdk/2.0.0/index.js`, { headers: { origin: 'http://app.example' } });
    expect([esm.status, esm.headers.get('content-type'), esm.headers.get('access-control-allow-origin')]).toEqual([
      200,
      'text/javascript; charset=utf-8',
      '*',
    ]);

    // Under npm start a developer points an endpoint at a backend on this machine.
    const secretKey = bannerField(first.banner, 'Secret key')!;
    const hookUrl = `http://127.0.0.1:${await freePort()}/hooks`;
    const created = await fetch(`${api}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: hookUrl }),
    });
    expect([created.status, ((await created.json()) as { url: string }).url]).toEqual([200, hookUrl]);

    await stopsEverything(first, 'SIGTERM');

    const second = await start(portEnv);
    expect([bannerField(second.banner, 'Email'), bannerField(second.banner, 'Password')]).toEqual([email, password]);
    // Made once: the second start writes no history again, and the figures are the same.
    expect(second.banner).toMatch(/Demo history\s+a year of buyers: every chart has figures/);
    const again = await fetch(`${api}/v1/charts/revenue_by_provider`, {
      headers: { authorization: `Bearer ${secretKey}` },
    });
    expect(((await again.json()) as { series: unknown }).series).toEqual(figures.revenue_by_provider);
    await stopsEverything(second, 'SIGINT');
  }, 600_000);
});
