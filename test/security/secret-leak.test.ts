import crypto from 'node:crypto';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { DefaultLogger } from '@temporalio/worker';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { ROOT_DIR } from '../../runtime/config';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { attachToApp } from '../../db/app-providers';
import { createConnection } from '../../db/connection-service';
import { createProvenConnection } from '../helpers/connections';
import { withTenant } from '../../db/tenant-tx';
import { OPERATIONS } from '../../operations';
import { createAdapters } from '../../providers';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { runProviderProbe } from '../../temporal/workflow-starts';
import { testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { historyText } from '../helpers/history';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';

/**
 * A full run with real credentials — connect every provider, probe each one in both modes
 * through a real worker (decrypting inside the activity), read every endpoint, re-encrypt —
 * while capturing every log line, stdout/stderr write, API response, Temporal history and
 * database row. No credential value may appear in any of them.
 */
describe('provider secrets never leak', () => {
  const captured: string[] = [];
  const secrets = new Set<string>();
  let emulators: Record<ProviderId, RunningEmulator>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  const masterKey = `k1:${crypto.randomBytes(32).toString('base64')}`;
  const origOut = process.stdout.write.bind(process.stdout);
  const origErr = process.stderr.write.bind(process.stderr);
  const CONSOLE_LEVELS = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const origConsole: Partial<Record<(typeof CONSOLE_LEVELS)[number], (...a: unknown[]) => void>> = {};

  /** Register each secret-bearing value (and a long slice of PEM bodies, which may be re-wrapped). */
  function remember(value: string) {
    if (value.includes('PRIVATE KEY')) {
      const body = value.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
      secrets.add(body.slice(20, 80));
    } else if (value.length >= 8) secrets.add(value);
  }
  const SECRET_FIELDS = /secret|api_key|private_key|password|token/i;
  function rememberCredential(cred: Record<string, string>) {
    for (const [k, v] of Object.entries(cred)) {
      if (k === 'service_account_json') rememberCredential(JSON.parse(v));
      else if (SECRET_FIELDS.test(k)) remember(v);
    }
  }
  function assertClean(where: string, text: string) {
    for (const s of secrets) if (text.includes(s)) throw new Error(`a credential value appeared in ${where}`);
  }

  beforeAll(async () => {
    const hook = (orig: typeof process.stdout.write) =>
      ((chunk: any, ...rest: any[]) => {
        captured.push(String(chunk));
        return orig(chunk, ...rest);
      }) as typeof process.stdout.write;
    process.stdout.write = hook(origOut);
    process.stderr.write = hook(origErr);
    // The test runner routes console output around process.stdout, so capture it at the source.
    for (const level of CONSOLE_LEVELS) {
      const orig = console[level].bind(console);
      origConsole[level] = orig;
      console[level] = (...args: unknown[]) => {
        captured.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
        orig(...args);
      };
    }

    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    const sink = new Writable({
      write(chunk, _e, cb) {
        captured.push(String(chunk));
        cb();
      },
    });
    worker = await startTestWorker({
      config: { providerBaseUrls },
      masterKey,
      logger: new DefaultLogger('TRACE', (entry) =>
        captured.push(`${entry.message} ${JSON.stringify(entry.meta ?? {})}`),
      ),
    });
    // The API shares the worker's task queue, so the reads that run workflows (the drift report) run here too.
    api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) }, sink);
  });
  afterAll(async () => {
    process.stdout.write = origOut;
    process.stderr.write = origErr;
    for (const level of CONSOLE_LEVELS) if (origConsole[level]) console[level] = origConsole[level]!;
    await worker?.stop();
    await api?.close();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('holds across connect, probe (both modes, success and rejection), every read, and re-encryption', async () => {
    const t = await newTenant('leak');
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      for (const provider of PROVIDERS) {
        const acct = await createEmulatorAccount(emulators[provider].url);
        rememberCredential(acct.credentials.test);
        rememberCredential(acct.credentials.live);
        if (acct.webhook_secret) remember(acct.webhook_secret);
        await createConnection(trx, worker.vault, {
          provider,
          account_ref: acct.account,
          is_default: true,
          credentials: acct.credentials,
          webhook_secret: acct.webhook_secret || null,
        });
      }
      // A connection whose credential the provider refuses: its rejection must not echo it.
      const wrong = `sk_test_${crypto.randomBytes(16).toString('hex')}`;
      remember(wrong);
      const other = await createEmulatorAccount(emulators.psp_a.url);
      rememberCredential(other.credentials.test);
      await createConnection(trx, worker.vault, {
        provider: 'psp_a',
        account_ref: other.account,
        is_default: false,
        credentials: { test: { secret_key: wrong } },
      });
    });
    expect(secrets.size).toBeGreaterThan(10);

    const outcomes = await runProviderProbe(worker.client, worker.taskQueue, t.tenant_id, crypto.randomUUID());
    const good = outcomes.filter((o) => o.reachable);
    expect(good).toHaveLength(PROVIDERS.length * 2);
    const refused = outcomes.filter((o) => !o.reachable);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ provider: 'psp_a', mode: 'test', error_class: 'rejected' });
    assertClean('probe outcomes', JSON.stringify(outcomes));

    for (const op of OPERATIONS.filter((o) => o.rest?.method === 'GET' && !o.rest.path.includes('{'))) {
      for (const base of [api.apiUrl, api.altUrl]) {
        const r = await call(base, op.rest!.path, t.secret_key);
        assertClean(`GET ${op.rest!.path}`, JSON.stringify(r.body));
      }
    }
    // A sync decrypts every credential to write at every provider: its answer and history too.
    const report = await call(api.apiUrl, '/sync', t.secret_key);
    expect(report.status).toBe(200);
    const drained = await call(api.apiUrl, '/sync', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: report.body.confirm_count }),
    });
    expect(drained.status).toBe(200);
    assertClean('sync run answer', JSON.stringify(drained.body));

    // Temporal's stored history of every workflow this tenant ran (probe, drift reads, the sync run,
    // and the Voided Purchases sweep the probe started for the proven Play connection).
    // Visibility is eventually consistent: wait (with a deadline) until all five kinds are listed,
    // so the check inspects real histories instead of passing on a short list.
    // This stack's runs only (its task queue): another test file's api process, as it starts, starts the
    // Voided Purchases sweep of every Play connection in the shared database, on its own queue and under
    // its own MASTER_KEY, which this worker's codec cannot (and should not) open.
    const listed = async () => {
      const out: { workflowId: string; runId: string }[] = [];
      for await (const wf of worker.client.workflow.list({ query: `BillingTenantId = '${t.tenant_id}'` }))
        if (wf.taskQueue === worker.taskQueue) out.push(wf);
      return out;
    };
    const kindsOf = (runs: { workflowId: string }[]) =>
      [...new Set(runs.map((r) => r.workflowId.split('-')[0]))].sort();
    const runs = await until('every kind of run listed', listed, (r) => kindsOf(r).length >= 5, 15_000);
    // `import`: the proof of a web account brings its existing subscribers in (docs/reconciliation.md).
    expect(kindsOf(runs)).toEqual(['drift', 'import', 'probe', 'sync', 'voided']);
    let events = 0;
    for (const wf of runs) {
      const history = await worker.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      events += history.events?.length ?? 0;
      assertClean(
        `history of ${wf.workflowId}`,
        await historyText(history, { codec: worker.codec, workflowId: wf.workflowId }),
      );
    }
    // The sweep runs for as long as the connection: this test's ends here.
    for (const wf of runs.filter((r) => r.workflowId.startsWith('voided-')))
      await worker.client.workflow
        .getHandle(wf.workflowId)
        .terminate('test over')
        .catch(() => undefined);
    expect(events).toBeGreaterThan(PROVIDERS.length * 2);

    const run = promisify(execFile);
    // Other suites' rows, under other master keys, are reported as failures (exit 0 or 1 with the
    // JSON result): fine here, as long as none is ours. A crash (no JSON result) fails the test.
    const re: { stdout: string; stderr: string; code?: number } = await run(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT_DIR, 'scripts/admin.ts'), 'vault:reencrypt', '--json'],
      {
        env: {
          ...process.env,
          DATABASE_URL: inject('databaseUrl'),
          MASTER_KEY: `k2:${crypto.randomBytes(32).toString('base64')},${masterKey}`,
        },
      },
    ).catch((e) => e);
    assertClean('admin CLI output', `${re.stdout}${re.stderr}`);
    expect([undefined, 0, 1], `admin CLI crashed: ${re.stderr}`).toContain(re.code);
    const result = JSON.parse(re.stdout) as {
      current_key_id: string;
      reencrypted: number;
      failures: string | { id: string }[];
    };
    result.failures = typeof result.failures === 'string' ? JSON.parse(result.failures) : result.failures;
    const failures = result.failures as { id: string }[];
    const ours: string[] = await testDb()('provider_connections').where({ tenant_id: t.tenant_id }).pluck('id');
    expect(result.current_key_id).toBe('k2');
    expect(result.reencrypted).toBeGreaterThanOrEqual(ours.length);
    expect(failures.filter((f) => ours.includes(f.id))).toEqual([]);

    // Every row of every table, ciphertext columns included (they must not contain plaintext either).
    const tables = await testDb()('information_schema.tables')
      .where({ table_schema: 'public', table_type: 'BASE TABLE' })
      .pluck('table_name');
    for (const table of tables) {
      const rows = await testDb()(table)
        .select(testDb().raw(`t::text as row`))
        .from(testDb().raw(`?? as t`, [table]));
      assertClean(`table ${table}`, rows.map((r: any) => r.row).join('\n'));
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(captured.length).toBeGreaterThan(10);
    assertClean('captured logs and output', captured.join('\n'));
  });
  it('no buyer email or purchase token is readable in any workflow history: web checkout, store registration, store notifications, a refresh', async () => {
    const t = await newTenant('buyer-data');
    const email = `buyer-${crypto.randomBytes(6).toString('hex')}@example.com`;
    const accounts = {} as Record<ProviderId, string>;
    const productId = await withTenant(testDb(), t.tenant_id, async (trx) => {
      for (const provider of ['psp_a', 'store_android', 'store_ios'] as const) {
        const acct = await createEmulatorAccount(emulators[provider].url);
        accounts[provider] = acct.account;
        await createProvenConnection(trx, worker.vault, {
          provider,
          account_ref: acct.account,
          is_default: true,
          credentials: acct.credentials,
          webhook_secret: acct.webhook_secret || null,
        });
      }
      await attachToApp(trx, t.app_id, 'store_android');
      await attachToApp(trx, t.app_id, 'store_ios');
      const [p] = await trx('products')
        .insert({
          tenant_id: t.tenant_id,
          sku: 'premium_monthly',
          name: 'Premium',
          tier: 'monthly',
          android_store_product_id: 'premium_monthly',
          ios_store_product_id: 'premium_monthly',
        })
        .returning('id');
      await trx('prices').insert({
        tenant_id: t.tenant_id,
        product_id: p.id,
        country: 'US',
        currency: 'USD',
        amount_minor: 999,
      });
      return p.id as string;
    });
    expect(
      (await call(api.apiUrl, `/products/${productId}/sync?provider=psp_a`, t.secret_key, { method: 'POST' })).body.ok,
    ).toBe(true);
    const pk = (await testDb()('apps').where({ id: t.app_id }).first('publishable_key_test'))
      .publishable_key_test as string;
    const control = async (provider: ProviderId, route: string, body: unknown) =>
      (
        await fetch(`${emulators[provider].url}/__control${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json();
    const hook = (provider: ProviderId) => `${api.dashboardRoot}/api/webhooks/${provider}`;

    // A web checkout whose events name the buyer's email.
    const checkout = await control('psp_a', '/checkout', {
      sku: 'premium_monthly',
      email,
      target: hook('psp_a'),
      account: accounts.psp_a,
      mode: 'test',
      app_user_id: 'web_user',
    });
    expect(checkout.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
    // A Play purchase registered by the SDK, then a notification naming its token.
    const { purchase_token: token } = await control('store_android', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: accounts.store_android,
      app_user_id: 'android_user',
    });
    const registered = await call(api.apiRoot, '/v1/sdk/store-purchases', pk, {
      method: 'POST',
      body: JSON.stringify({
        app_user_id: 'android_user',
        provider: 'store_android',
        product_id: 'premium_monthly',
        purchase_token: token,
      }),
    });
    expect(registered.status).toBe(200);
    const renewed = await control('store_android', '/events', {
      type: 'SUBSCRIPTION_RENEWED',
      target: hook('store_android'),
      account: accounts.store_android,
      data: { purchaseToken: token },
    });
    expect(renewed.status).toBe(200);
    // An App Store purchase registered by its signed transaction.
    const ios = await control('store_ios', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: accounts.store_ios,
      app_user_id: 'ios_user',
    });
    expect(
      (
        await call(api.apiRoot, '/v1/sdk/store-purchases', pk, {
          method: 'POST',
          body: JSON.stringify({
            app_user_id: 'ios_user',
            provider: 'store_ios',
            signed_transaction: ios.signed_transaction,
          }),
        })
      ).status,
    ).toBe(200);

    await until(
      'web premium',
      () => call(api.apiRoot, '/v1/sdk/subscribers/web_user', pk),
      (r) => confirmedPremium(r.body),
    );
    const subs = await testDb()('subscriptions').where({ tenant_id: t.tenant_id, provider: 'psp_a' });
    // The email did reach the record (so the check below is about where it went, not whether it came).
    expect(subs.map((x: any) => x.email)).toContain(email);
    const notified = await until(
      'the notification processed',
      () =>
        testDb()('webhook_deliveries')
          .where({ tenant_id: t.tenant_id, provider: 'store_android', event_id: renewed.id })
          .first(),
      (d) => d?.status === 'processed',
    );
    expect(notified.status).toBe('processed');

    // A refresh re-reads the Play purchase with the token kept sealed with its claim: not in its answer either.
    const refreshed = await call(api.apiUrl, '/customers/android_user/refresh', t.secret_key, { method: 'POST' });
    expect(refreshed.body).toMatchObject({ compared: 1, skipped: [] });
    expect(JSON.stringify(refreshed.body)).not.toContain(token);

    // This stack's runs only (its task queue), as above.
    const listed = async () => {
      const out: { workflowId: string; runId: string }[] = [];
      for await (const wf of worker.client.workflow.list({ query: `BillingTenantId = '${t.tenant_id}'` }))
        if (wf.taskQueue === worker.taskQueue) out.push(wf);
      return out;
    };
    const kinds = (runs: { workflowId: string }[]) =>
      new Set(runs.map((r) => r.workflowId.replace(/-[0-9a-f]{8}-.*$/, '')));
    const runs = await until('every kind of run listed', listed, (r) =>
      ['customer', 'store-purchase', 'store-notification', 'refresh'].every((k) => kinds(r).has(k)),
    );
    for (const wf of runs) {
      const history = await worker.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      // What an operator with the key reads, decoded: ids and hashes only.
      const text = await historyText(history, { codec: worker.codec, workflowId: wf.workflowId });
      expect(text, `history of ${wf.workflowId}`).toContain(t.tenant_id);
      expect(text.includes(email), `buyer email in the history of ${wf.workflowId}`).toBe(false);
      expect(text.includes(token), `purchase token in the history of ${wf.workflowId}`).toBe(false);
    }
    // Nor in any log line or output of the run (the refresh opened the kept token to call Play).
    expect(captured.join('\n').includes(token), 'purchase token in the logs').toBe(false);
    // Kept only sealed: no row of any table holds it in clear.
    const kept = await testDb()('store_purchase_tokens').where({ tenant_id: t.tenant_id, provider: 'store_android' });
    expect(kept.map((k) => String(k.purchase_token_enc).slice(0, 3))).toEqual(['v1:']);
    for (const table of [
      'store_purchase_tokens',
      'subscriptions',
      'reconciliations',
      'audit_entries',
      'outbound_events',
    ])
      expect(JSON.stringify(await testDb()(table).where({ tenant_id: t.tenant_id })), table).not.toContain(token);
  });
});
