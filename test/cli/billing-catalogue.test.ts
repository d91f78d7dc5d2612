import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { SCOPES } from '../../domain/scopes';
import { ROOT_DIR } from '../../runtime/config';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { generateMasterKey } from '../../vault/vault';
import { call, listen, newTenant, refill } from '../helpers/api';
import { testDb } from '../helpers/db';
import { useEmulatorStack } from '../helpers/emulator-stack';
import { processResult } from '../helpers/cli-run';
import { billingCli, billingProcess, type BillingRunAt } from '../helpers/billing-cli';
import { makeApiKey, makeProduct } from '../helpers/factories';

/** The CLI configured only by the two variables, in a directory of its own (in this process: test/helpers/billing-cli.ts). */
function billingAt(env: { url: string; key: string; github?: boolean }, cwd: string): BillingRunAt {
  const runEnv: NodeJS.ProcessEnv = { ...process.env, BILLING_API_URL: env.url, BILLING_SECRET_KEY: env.key };
  delete runEnv.GITHUB_ACTIONS;
  delete runEnv.GITHUB_WORKSPACE;
  if (env.github) Object.assign(runEnv, { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: cwd });
  return { env: runEnv, cwd };
}

const billing = (args: string[], env: { url: string; key: string; github?: boolean }, cwd: string) =>
  billingCli(args, billingAt(env, cwd));

/**
 * `billing catalogue pull / plan / apply` against the five emulators, a real worker, the real
 * Temporal server and the API listening on HTTP: exit codes, the YAML round trip, an unreachable
 * provider, a provider failing during the sync, a change in the middle of an apply, and a bad
 * file refused before any request. A small proxy in front of the API counts requests and makes
 * the mid-way change at the exact moment the CLI posts the sync.
 */
describe('billing catalogue (the CI client)', () => {
  const masterKey = generateMasterKey();
  const stack = useEmulatorStack(masterKey);
  let dir: string;
  let proxy: Awaited<ReturnType<typeof listen>>;
  const seen: string[] = [];
  /** Run once, just before the next POST /v1/sync reaches the API. */
  let beforeSync: (() => Promise<void>) | null = null;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-cli-'));
    const target = new URL(stack.api.apiRoot);
    proxy = await listen((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        if (req.method === 'POST' && req.url === '/v1/sync' && beforeSync) {
          const hook = beforeSync;
          beforeSync = null;
          await hook();
        }
        const upstream = http.request(
          { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          },
        );
        upstream.end(Buffer.concat(chunks));
      });
    });
  });
  afterAll(async () => {
    await proxy?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const fault = (p: ProviderId, body: unknown) =>
    fetch(`${stack.emulators[p].url}/__control/faults`, {
      method: body ? 'POST' : 'DELETE',
      headers: { 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });

  /** A tenant connected to the five emulators, with an empty catalogue. */
  async function connectedTenant(name: string) {
    const t = await newTenant(name);
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      for (const provider of PROVIDERS) {
        const acct = await createEmulatorAccount(stack.emulators[provider].url);
        await createConnection(trx, stack.worker.vault, {
          provider,
          account_ref: acct.account,
          credentials: acct.credentials,
          webhook_secret: acct.webhook_secret || null,
        });
      }
    });
    const env = { url: `${proxy.url}/v1`, key: t.secret_key };
    const run = async (args: string[], opts: { github?: boolean } = {}) => {
      await refill(t.tenant_id);
      return billing(args, { ...env, ...opts }, dir);
    };
    return { ...t, env, run };
  }

  const write = (name: string, text: string) => {
    fs.writeFileSync(path.join(dir, name), text);
    return name;
  };

  const CATALOGUE = `version: 1
products:
  # Comments are the reviewers' own.
  - sku: pro_monthly
    name: Pro monthly
    tier: monthly
    android_store_product_id: pro-monthly
    ios_store_product_id: com.example.pro_monthly
    prices:
      - { country: US, currency: USD, amount: 999 }
      - { country: DE, currency: EUR, amount: 899 }
  - sku: pro_annual
    name: Pro annual
    tier: annual
    android_store_product_id: pro-annual
    ios_store_product_id: com.example.pro_annual
    entitlement: pro.annual
    prices:
      - { country: US, currency: USD, amount: 8999 }
      - { country: DE, currency: EUR, amount: 7999 }
`;

  it('plan says 2, apply writes and syncs every provider (0), then plan says 0; pull round-trips to nothing to do', async () => {
    const t = await connectedTenant('cli-apply');
    const file = write('apply.yaml', CATALOGUE);

    const plan = await t.run(['catalogue', 'plan', '-f', file]);
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stdout).toContain('+ product pro_monthly (Pro monthly)');
    expect(plan.stdout).toContain('+ price pro_annual DE: 79.99 EUR');
    expect(plan.stdout).toMatch(/^Plan: 6 catalogue changes, /m);

    const asJson = await t.run(['catalogue', 'plan', '-f', file, '--json']);
    expect(asJson.code).toBe(2);
    const body = JSON.parse(asJson.stdout);
    expect(body).toMatchObject({ has_changes: true, confirm_count: expect.any(Number) });
    expect(body.catalogue_changes.map((c: any) => `${c.kind} ${c.sku}`)).toEqual([
      'create_product pro_annual',
      'set_price pro_annual',
      'set_price pro_annual',
      'create_product pro_monthly',
      'set_price pro_monthly',
      'set_price pro_monthly',
    ]);

    const apply = await t.run(['catalogue', 'apply', '-f', file]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toContain('done: + product pro_annual (Pro annual)');
    const runId = /Sync run ([0-9a-f-]{36}) finished/.exec(apply.stdout)?.[1];
    expect(runId).toBeDefined();
    for (const p of PROVIDERS) expect(apply.stdout).toMatch(new RegExp(`^\\[\\d\\] ${p}: succeeded`, 'm'));
    expect(apply.stdout).toContain('Every provider succeeded.');
    // Every per-provider event of the run, as the API lists them.
    const events = await call(stack.api.apiUrl, `/sync/events?run_id=${runId}`, t.secret_key);
    expect(events.body.data).toHaveLength(PROVIDERS.length);
    for (const e of events.body.data) expect(apply.stdout).toContain(`  ${e.provider}: ${e.status}`);
    // Written through REST under the key: the audit trail names each write.
    const audit = await call(stack.api.apiUrl, '/audit?action=products.create', t.secret_key);
    expect(audit.body.data.filter((a: any) => a.actor_type === 'api_key')).toHaveLength(2);

    const again = await t.run(['catalogue', 'plan', '-f', file]);
    expect(again.stdout + again.stderr).toContain('Nothing to do.');
    expect(again.code).toBe(0);

    const pull = await t.run(['catalogue', 'pull']);
    expect(pull.code, pull.stderr).toBe(0);
    expect(pull.stdout).toMatch(/^# /);
    expect(pull.stdout.indexOf('sku: pro_annual')).toBeLessThan(pull.stdout.indexOf('sku: pro_monthly'));
    const pulled = write('pulled.yaml', pull.stdout);
    const roundTrip = await t.run(['catalogue', 'plan', '-f', pulled]);
    expect([roundTrip.code, roundTrip.stdout]).toEqual([0, expect.stringContaining('Nothing to do.')]);
    // Stable: a second pull is byte for byte the same.
    expect((await t.run(['catalogue', 'pull'])).stdout).toBe(pull.stdout);

    // One price changed in review: one line, exit 2, and an annotation at the product's line under GitHub Actions.
    const edited = write('edited.yaml', pull.stdout.replace('amount: 999 }', 'amount: 1099 }'));
    const one = await t.run(['catalogue', 'plan', '-f', edited], { github: true });
    expect(one.code).toBe(2);
    expect(one.stdout).toContain('~ price pro_monthly US: 9.99 USD → 10.99 USD');
    const line = pull.stdout.split('\n').findIndex((l) => l.includes('sku: pro_monthly')) + 1;
    expect(one.stdout).toContain(`::notice file=edited.yaml,line=${line},title=billing plan::~ price pro_monthly US`);

    // Applied, with a renamed product too: only the changed fields and prices are written, then synced.
    const renamed = write(
      'renamed.yaml',
      fs.readFileSync(path.join(dir, edited), 'utf8').replace('name: Pro annual', 'name: Pro yearly'),
    );
    const second = await t.run(['catalogue', 'apply', '-f', renamed]);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(second.stdout).toContain('done: ~ product pro_annual: name "Pro annual" → "Pro yearly"');
    expect(second.stdout).toContain('done: ~ price pro_monthly US: 9.99 USD → 10.99 USD');
    const product = (await call(stack.api.apiUrl, '/products?sku=pro_monthly', t.secret_key)).body.data[0];
    const detail = await call(stack.api.apiUrl, `/products/${product.id}`, t.secret_key);
    expect(detail.body.pricing.find((p: any) => p.country === 'US').amount_minor).toBe(1099);
    expect(detail.body.synced).toBe(true);
    // The file's entitlement reached the product; a product naming none unlocks premium.
    expect(detail.body.entitlement).toBe('premium');
    const annual = (await call(stack.api.apiUrl, '/products?sku=pro_annual', t.secret_key)).body.data[0];
    expect(annual.entitlement).toBe('pro.annual');
    expect(pull.stdout).toContain('entitlement: pro.annual');
    const settled = await t.run(['catalogue', 'plan', '-f', renamed]);
    expect([settled.code, settled.stdout]).toEqual([0, expect.stringContaining('Nothing to do.')]);
  });

  it('an unreachable provider: plan and apply exit 1 naming drift_incomplete, and apply writes nothing', async () => {
    const t = await connectedTenant('cli-down');
    const file = write('down.yaml', CATALOGUE);
    await fault('psp_b', { mode: 'down' });
    try {
      const plan = await t.run(['catalogue', 'plan', '-f', file]);
      expect(plan.code).toBe(1);
      expect(plan.stderr).toContain('error: drift_incomplete:');
      expect(plan.stderr).toContain('psp_b');
      const apply = await t.run(['catalogue', 'apply', '-f', file, '--json']);
      expect(apply.code).toBe(1);
      expect(JSON.parse(apply.stdout)).toMatchObject({ error: 'drift_incomplete' });
      expect((await call(stack.api.apiUrl, '/products', t.secret_key)).body.data).toEqual([]);
    } finally {
      await fault('psp_b', null);
    }
  });

  it('a provider failing during the sync makes apply exit 1, with its failed event', async () => {
    const t = await connectedTenant('cli-fail');
    const file = write('fail.yaml', CATALOGUE);
    // Razorpay refuses payment links: the drift read (items, plans) works, the sync's links fail.
    await fault('psp_c', { mode: 'error', status: 400, route: '/v1/payment_links' });
    try {
      const apply = await t.run(['catalogue', 'apply', '-f', file]);
      expect(apply.code, apply.stdout + apply.stderr).toBe(1);
      expect(apply.stdout).toMatch(/^\[\d\] psp_c: failed/m);
      expect(apply.stdout).toContain('Not every provider succeeded');
    } finally {
      await fault('psp_c', null);
    }
  });

  it('a change between the report and the sync: 409 count_mismatch, plans once more and stops with the diff', async () => {
    const t = await connectedTenant('cli-race');
    const file = write('race.yaml', CATALOGUE);
    beforeSync = async () => {
      await makeProduct(t.tenant_id, {
        sku: 'sneaked_in',
        prices: [
          { country: 'US', currency: 'USD', amount: 100 },
          { country: 'DE', currency: 'EUR', amount: 100 },
        ],
      });
    };
    const apply = await t.run(['catalogue', 'apply', '-f', file]);
    expect(beforeSync).toBeNull();
    expect(apply.code, apply.stdout + apply.stderr).toBe(1);
    expect(apply.stdout).toContain('count_mismatch');
    expect(apply.stdout).toContain('nothing was synced. The plan now:');
    expect(apply.stdout).toContain('? sneaked_in: in the service, not in the file');
    expect(apply.stdout).toMatch(/~ sync \S+ (live|test) product:sneaked_in: product-missing-at-provider/);
    // No run started.
    expect(await testDb()('sync_runs').where({ tenant_id: t.tenant_id }).count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('sync, events and readiness one at a time: exit codes, --json, and the API error code by name', async () => {
    const t = await connectedTenant('cli-steps');
    await makeProduct(t.tenant_id, {
      sku: 'step_monthly',
      tier: 'monthly',
      prices: [{ country: 'US', currency: 'USD', amount: 500 }],
    });

    const stale = await t.run(['sync', '--confirm-count', '999']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('error: count_mismatch:');

    const sync = await t.run(['sync', '--json']);
    expect(sync.code, sync.stderr).toBe(0);
    const run = JSON.parse(sync.stdout);
    expect(run).toMatchObject({ run_id: expect.any(String), ok: true });
    expect(run.events.map((e: any) => e.provider).sort()).toEqual([...PROVIDERS].sort());
    // Progress goes to stderr under --json, so stdout stays one JSON document.
    expect(sync.stderr).toMatch(/^\[1\] /m);

    const events = await t.run(['events', '--run-id', run.run_id]);
    expect(events.code).toBe(0);
    for (const p of PROVIDERS) expect(events.stdout).toMatch(new RegExp(`^${p}: succeeded`, 'm'));
    const eventsJson = JSON.parse((await t.run(['events', '--run-id', run.run_id, '--json'])).stdout);
    expect(eventsJson.events).toHaveLength(PROVIDERS.length);
    const badId = await t.run(['events', '--run-id', 'not-a-run']);
    expect(badId.code).toBe(1);
    expect(badId.stderr).toMatch(/^error: invalid_request: .*\(param run_id\)/m);

    const readiness = JSON.parse((await t.run(['readiness', '--json'])).stdout);
    expect(readiness.providers.map((r: any) => r.provider).sort()).toEqual([...PROVIDERS].sort());
    const pulled = JSON.parse((await t.run(['catalogue', 'pull', '--json'])).stdout);
    expect(pulled.products.map((p: any) => p.sku)).toEqual(['step_monthly']);

    const wrongKey = await billing(['readiness'], { url: t.env.url, key: 'sk_test_not_a_key' }, dir);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/^error: invalid_api_key: GET \/readiness answered 401/m);
    const nowhere = await billing(['readiness'], { url: 'http://127.0.0.1:9/v1', key: t.env.key }, dir);
    expect(nowhere.stderr).toContain('error: unreachable:');
  });

  it('a key whose writes wait for a person: apply stops at the first held write (pending_approval), having changed nothing', async () => {
    const t = await connectedTenant('cli-held');
    const held = await makeApiKey(t.tenant_id, [...SCOPES], {
      requireApproval: true,
    });
    await refill(t.tenant_id);
    const r = await billing(
      ['catalogue', 'apply', '-f', write('held.yaml', CATALOGUE)],
      { url: t.env.url, key: held.secret_key },
      dir,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: pending_approval: POST \/products waits for a person's approval: http/m);
    expect(r.stderr).toMatch(/GET \/v1\/changes\/[0-9a-f-]{36}/);
    expect(await testDb()('products').where({ tenant_id: t.tenant_id }).count('* as n').first()).toEqual({ n: 0 });
    const changes = await testDb()('held_changes').where({ tenant_id: t.tenant_id });
    expect(changes.map((c) => [c.operation, c.status])).toEqual([['products.create', 'pending_approval']]);
  });

  it('an invalid file is refused with its line and field before any request', async () => {
    const t = await connectedTenant('cli-invalid');
    const bad = write(
      'bad.yaml',
      CATALOGUE.replace('    tier: annual\n', '    tier: annual\n    colour: blue\n').replace(
        'currency: EUR, amount: 899',
        'currency: XYZ, amount: 899',
      ),
    );
    const before = seen.length;
    for (const cmd of ['plan', 'apply']) {
      const r = await t.run(['catalogue', cmd, '-f', bad], { github: true });
      expect(r.code).toBe(1);
      // Every problem in one run, in file order, each with its line, column and field.
      expect(r.stderr).toMatch(
        /^error: invalid_catalogue: bad\.yaml:11:\d+: products\[0\] \(pro_monthly\)\.prices\[1\] \(DE XYZ\)\.currency: "XYZ" is not a supported ISO 4217 currency/m,
      );
      expect(r.stderr).toMatch(
        /^error: invalid_catalogue: bad\.yaml:15:5: products\[1\] \(pro_annual\)\.colour: unknown field/m,
      );
      expect(r.stdout).toContain('::error file=bad.yaml,line=11,title=invalid_catalogue::');
    }
    const unknown = write(
      'unknown.yaml',
      CATALOGUE.replace('    tier: annual\n', '    tier: annual\n    colour: blue\n'),
    );
    const r = await t.run(['catalogue', 'plan', '-f', unknown]);
    expect(r.stderr).toContain('unknown.yaml:15:5: products[1] (pro_annual).colour: unknown field "colour"');
    expect(seen.length).toBe(before);
  });
  it('the bin in a process of its own answers as the in-process runs do: readiness, an invalid file, an unknown command', async () => {
    const t = await connectedTenant('cli-process');
    const bad = write('process-bad.yaml', 'version: 1\nproducts:\n  - sku: x\n    colour: red\n');
    const commands = [['readiness', '--json'], ['catalogue', 'plan', '-f', bad], ['nonsense']];
    for (const args of commands) {
      await refill(t.tenant_id);
      const inProcess = await billing(args, t.env, dir);
      await refill(t.tenant_id);
      const own = await billingProcess(args, billingAt(t.env, dir));
      expect([args.join(' '), own.code, own.stdout, own.stderr]).toEqual([
        args.join(' '),
        inProcess.code,
        inProcess.stdout,
        inProcess.stderr,
      ]);
    }
  });

  it('npx billing runs from a checkout as a user would: --help everywhere, missing configuration by name, readiness', async () => {
    const npx = (args: string[], env: NodeJS.ProcessEnv = {}) => {
      const childEnv: NodeJS.ProcessEnv = { ...process.env };
      delete childEnv.BILLING_API_URL;
      delete childEnv.BILLING_SECRET_KEY;
      return processResult('npx', ['--no-install', 'billing', ...args], {
        cwd: ROOT_DIR,
        env: { ...childEnv, ...env },
      });
    };
    // `npx billing` itself for the top-level help and the missing configuration; the subcommands'
    // help and the schema through the same bin without npm in front (`billing`, above), which is
    // what npx runs: each npx spends seconds of CPU starting npm before the CLI's own start.
    const subs = [
      ['catalogue', '--help'],
      ['catalogue', 'plan', '--help'],
      ['catalogue', 'apply', '--help'],
      ['events', '--help'],
    ];
    const bare = { url: '', key: '' };
    const [help, noConfig, schema, ...subRuns] = await Promise.all([
      npx(['--help']),
      npx(['readiness']),
      billing(['catalogue', 'schema'], bare, ROOT_DIR),
      ...subs.map((sub) => billing(sub, bare, ROOT_DIR)),
    ]);
    expect(help.code, help.stderr).toBe(0);
    for (const c of ['catalogue', 'sync', 'readiness', 'events']) expect(help.stdout).toContain(c);
    subs.forEach((sub, i) => {
      expect([sub.join(' '), subRuns[i].code]).toEqual([sub.join(' '), 0]);
      expect(subRuns[i].stdout).toContain('Usage: billing');
    });
    expect(noConfig.code).toBe(1);
    expect(noConfig.stderr).toContain('error: missing_configuration: BILLING_API_URL is not set');
    expect(JSON.parse(schema.stdout).title).toBe('Billing catalogue file');
    const t = await connectedTenant('cli-npx');
    await refill(t.tenant_id);
    const readiness = await npx(['readiness'], { BILLING_API_URL: t.env.url, BILLING_SECRET_KEY: t.env.key });
    expect(readiness.code, readiness.stderr).toBe(0);
    for (const p of PROVIDERS) expect(readiness.stdout).toContain(`${p}: live`);
  }, 180_000);
});
