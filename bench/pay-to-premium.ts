/**
 * Pay → premium, as a person sees it: the example web app (examples/web, the built SDK) in real
 * Chromium against the api and worker processes `npm start` runs, the psp_a emulator's hosted
 * checkout in a new tab. The clock starts when "Pay" is clicked in the checkout tab and stops
 * when the app's page first shows "premium" (the page stamps Date.now() then; same machine
 * clock). Each run is a fresh app user.
 *
 * Two behaviours, interleaved run by run in one process so the machine's load hits both alike:
 *   wait     the SDK's checkout({ waitForPremium }): one request the service holds until the
 *            entitlement commits (Postgres NOTIFY), ≤ 20 s;
 *   refresh  the example app before the wait: a forced refresh when the tab closes, then again
 *            every 2.1 s while free (its refresh window is 2 s).
 *
 * And two deliveries: `sync`, as the emulator does it (every webhook answered before its
 * "Payment succeeded" page, so the tab closes after the write); `async`, as Stripe does it (the
 * redirect does not wait for the webhooks): a relay answers the emulator at once and hands each
 * event to the service a random 0–3 s after Pay, in order, signature untouched.
 *
 *   DATABASE_URL=… npm run bench:pay-to-premium [-- --runs 20]
 */
import os from 'node:os';
import http from 'node:http';
import type net from 'node:net';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../test/e2e/helpers/chromium';
import { attachToApp } from '../db/app-providers';
import { withTenant } from '../db/tenant-tx';
import { startExampleServer } from '../examples/web/serve';
import { machine, table, f0 } from './lib/report';
import { quantile, startWebhookStack, writeResults } from './lib/webhook-stack';
import { runBench } from './lib/run';
import { arg } from './lib/args';

const RUNS = Number(arg('runs', '20'));
const MAX_DELAY_MS = Number(arg('max-delay-ms', '3000'));
const MODES = ['wait', 'refresh'] as const;
type Mode = (typeof MODES)[number];
const DELIVERIES = ['sync', 'async'] as const;
type Delivery = (typeof DELIVERIES)[number];
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const log = (m: string) => console.log(`[pay-to-premium] ${m}`);

interface Run {
  mode: Mode;
  delivery: Delivery;
  /** Pay clicked → page shows premium. */
  payToPremium: number;
  /** Pay clicked → checkout tab closed. */
  payToClose: number;
  /** Entitlement row written (its transaction's start) minus tab closed: > 0 when the webhook landed after the tab closed. */
  writeAfterClose: number;
  /** Entitlement row written (its transaction's start) → page shows premium: what the app adds after the service knows. */
  writeToPremium: number;
  /** Subscriber requests the page made after Pay. */
  requests: number;
}

async function stripe(base: string, p: string, key: string, form: Record<string, string>) {
  const res = await fetch(`${base}${p}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  const body = (await res.json()) as Record<string, any>;
  if (!res.ok) throw new Error(`POST ${p} → ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * Between the emulator and the service's receiver: answers the emulator 200 at once and
 * forwards each event (raw body, signature headers) `delayMs` after the current purchase's Pay,
 * one at a time in arrival order, as a provider's asynchronous delivery would.
 */
async function startRelay(target: string) {
  let chain = Promise.resolve();
  const state = { payAt: 0, delayMs: 0, failures: 0 };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    const due = state.payAt + state.delayMs;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
    chain = chain.then(async () => {
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const r = await fetch(target, { method: 'POST', headers, body: Buffer.concat(chunks) }).catch(() => null);
      if (!r || r.status !== 200) state.failures++;
      await r?.arrayBuffer().catch(() => undefined);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`,
    state,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function main() {
  const startedAt = Date.now();
  const m0 = machine('');
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(ROOT, 'sdk/tsconfig.json')],
    { stdio: 'inherit' },
  );
  const stack = await startWebhookStack(log);
  let browser: Browser | undefined;
  let example: Awaited<ReturnType<typeof startExampleServer>> | undefined;
  let relay: Awaited<ReturnType<typeof startRelay>> | undefined;
  const runs: Run[] = [];
  try {
    // The example app's plan: the stack's product `pro`, sold through an app-scoped psp_a payment link.
    const tenant = stack.tenant as typeof stack.tenant & { app_id: string };
    const key = stack.accountKeys.test.secret_key;
    const emu = stack.emulators.psp_a.url;
    const prod = await stripe(emu, '/v1/products', key, { name: 'Pro', 'metadata[sku]': 'pro' });
    const price = await stripe(emu, '/v1/prices', key, {
      product: prod.id,
      currency: 'usd',
      unit_amount: '999',
      'recurring[interval]': 'month',
      'metadata[sku]': 'pro',
    });
    const link = await stripe(emu, '/v1/payment_links', key, {
      'line_items[0][price]': price.id,
      'line_items[0][quantity]': '1',
      'metadata[sku]': 'pro',
    });
    const product = await stack.db('products').where({ tenant_id: tenant.tenant_id, sku: 'pro' }).first('id');
    await stack.db('products').where({ id: product.id }).update({ app_id: tenant.app_id });
    await withTenant(stack.db, tenant.tenant_id, (trx) => attachToApp(trx, tenant.app_id, 'psp_a'));
    await stack.db('payment_links').insert({
      tenant_id: tenant.tenant_id,
      app_id: tenant.app_id,
      product_id: product.id,
      provider: 'psp_a',
      mode: 'test',
      external_id: link.id,
      url: link.url,
    });
    const endpoint = (url: string) =>
      fetch(`${emu}/__control/webhook_endpoints`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url, account: stack.account }),
      });
    relay = await startRelay(stack.webhookUrl);

    example = await startExampleServer({
      backend: stack.apiRoot,
      publishableKey: tenant.publishable_key,
      appUserId: 'unused',
      planId: 'pro',
    });
    browser = await launchBrowser();
    const context = await browser.newContext();

    const one = async (mode: Mode, delivery: Delivery, i: number): Promise<Run> => {
      // The emulator delivers to the endpoint registered last for the account.
      await endpoint(delivery === 'sync' ? stack.webhookUrl : relay!.url);
      const user = `p2p_${mode}_${i}_${Date.now().toString(36)}`;
      const page = await context.newPage();
      let afterPay = false;
      let requests = 0;
      page.on(
        'request',
        (r) => afterPay && r.method() === 'GET' && r.url().includes('/v1/sdk/subscribers/') && requests++,
      );
      try {
        await page.goto(`${example!.url}/?user=${user}&mode=${mode}`);
        await page.waitForFunction(() => document.getElementById('status')?.textContent === 'free', null, {
          timeout: 30_000,
        });
        const [tab] = await Promise.all([page.waitForEvent('popup'), page.click('#subscribe')]);
        await tab.waitForSelector('#pay', { timeout: 30_000 });
        const closed = tab.waitForEvent('close', { timeout: 60_000 }).then(() => Date.now());
        afterPay = true;
        const paidAt = Date.now();
        relay!.state.payAt = paidAt;
        relay!.state.delayMs = Math.random() * MAX_DELAY_MS;
        await tab.click('#pay');
        const closedAt = await closed;
        await page.waitForFunction(() => !!document.getElementById('status')?.dataset.premiumAt, null, {
          timeout: 60_000,
        });
        const premiumAt = Number(await page.getAttribute('#status', 'data-premium-at'));
        const ent = await stack
          .db('entitlements')
          .where({ tenant_id: tenant.tenant_id, app_user_id: user })
          .first('updated_at');
        const writtenAt = ent ? new Date(ent.updated_at).getTime() : NaN;
        return {
          mode,
          delivery,
          payToPremium: premiumAt - paidAt,
          payToClose: closedAt - paidAt,
          writeAfterClose: writtenAt - closedAt,
          writeToPremium: premiumAt - writtenAt,
          requests,
        };
      } finally {
        await page.close();
      }
    };

    // Warm-up: first page loads, first workflow, first SDK build load: not counted.
    await one('wait', 'sync', -1);
    await one('refresh', 'async', -1);
    for (let i = 0; i < RUNS; i++) {
      for (const delivery of DELIVERIES)
        for (const mode of i % 2 ? [...MODES].reverse() : MODES) {
          const r = await one(mode, delivery, i);
          runs.push(r);
          log(
            `${delivery} ${mode} #${i}: pay→premium ${r.payToPremium} ms (tab closed at ${r.payToClose} ms, write ${f0(r.writeAfterClose)} ms after close, ${r.requests} request(s))`,
          );
        }
    }
  } finally {
    await browser?.close();
    await example?.close();
    await relay?.close();
    await stack.stop();
  }

  const sorted = (xs: number[]) => xs.filter(Number.isFinite).sort((a, b) => a - b);
  const stats = (delivery: Delivery, mode: Mode) => {
    const rs = runs.filter((r) => r.mode === mode && r.delivery === delivery);
    return { rs, lat: sorted(rs.map((r) => r.payToPremium)) };
  };
  const rows: (string | number)[][] = [];
  const ratios: string[] = [];
  for (const delivery of DELIVERIES) {
    for (const mode of MODES) {
      const { rs, lat } = stats(delivery, mode);
      rows.push([
        delivery === 'sync'
          ? 'sync (emulator: webhooks before the tab closes)'
          : `async (webhooks 0–${MAX_DELAY_MS / 1000} s after Pay, as Stripe)`,
        mode === 'wait'
          ? '**wait** (checkout waitForPremium: one held request)'
          : 'refresh (on close, then every 2.1 s while free)',
        rs.length,
        f0(quantile(lat, 0.5)),
        f0(quantile(lat, 0.9)),
        f0(quantile(lat, 0.99)),
        f0(lat.at(-1) ?? NaN),
        f0(quantile(sorted(rs.map((r) => r.payToClose)), 0.5)),
        `${rs.filter((r) => r.writeAfterClose > 0).length} of ${rs.length}`,
        `${f0(quantile(sorted(rs.map((r) => r.writeToPremium)), 0.5))} / ${f0(quantile(sorted(rs.map((r) => r.writeToPremium)), 0.99))}`,
        (rs.reduce((k, r) => k + r.requests, 0) / Math.max(1, rs.length)).toFixed(2),
      ]);
    }
    const w = stats(delivery, 'wait').lat;
    const r = stats(delivery, 'refresh').lat;
    ratios.push(
      `${delivery}: p50 ${(quantile(w, 0.5) / quantile(r, 0.5)).toFixed(2)}×, p99 ${(quantile(w, 0.99) / quantile(r, 0.99)).toFixed(2)}×`,
    );
  }
  const text = [
    `Run: ${m0.date} · \`npm run bench:pay-to-premium -- --runs ${RUNS}\` · ${f0((Date.now() - startedAt) / 1000)} s`,
    `Machine: ${m0.nproc} CPUs (${m0.cpuModel}), ${m0.memoryGiB} GiB RAM, node ${m0.node}, PostgreSQL ${stack.pgVersion}, Chromium headless; load average at start ${m0.loadavg}, at end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(
        ' ',
      )}. Shared and noisy: the api, worker, Temporal dev server, Postgres, the emulators, Chromium and other sessions' work share the CPUs.`,
    '',
    `From the click on Pay in the psp_a emulator's hosted checkout to the example app's page showing premium: ${RUNS} runs per row, all four rows interleaved in one run (a fresh app user each; two warm-up runs not counted). The api and worker run as \`npm start\` runs them (own processes, file-backed Temporal). Relay failures (a non-200 from the service): ${relay?.state.failures ?? 0}.`,
    '',
    table(
      [
        'delivery',
        'behaviour',
        'runs',
        'p50 ms',
        'p90 ms',
        'p99 ms',
        'max ms',
        'Pay → tab closed, p50 ms',
        'entitlement written after the tab closed',
        'entitlement written → page premium, p50 / p99 ms',
        'subscriber requests after Pay (mean)',
      ],
      rows,
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    `**wait / refresh, same run: ${ratios.join('; ')}.**${RUNS < 100 ? ` With ${RUNS} runs per row, p99 is the largest sample.` : ''}`,
  ].join('\n');
  writeResults('pay-to-premium.ts', 'Pay to premium in Chromium: wait vs refresh (bench/pay-to-premium.ts)', text);
  console.log(text);
}

runBench(main);
