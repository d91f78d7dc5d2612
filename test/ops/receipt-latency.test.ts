import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { createSession } from '../../db/dashboard-users';
import { call } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeTenant } from '../helpers/factories';
import { until } from '../helpers/until';
import { createEndpoint } from '../outbound/fixtures';
import { STACK_START_MS, sample, scrape, startStack, type Stack } from './stack';

/**
 * The lag people page on (docs/operations.md, "Objectives"): a psp_a checkout through the real
 * api, worker and outbound worker observes receipt → premium in the api (provisional) and the
 * worker (authoritative), and event → delivered in the outbound worker, with no tenant label; the
 * overview's health section shows the tenant's own p95 of the last hour from the database, not
 * another tenant's, and says so when there is nothing to measure.
 */
describe('receipt → premium and event → delivered', () => {
  let stack: Stack;
  let receiver: http.Server;
  const received: string[] = [];
  const cookieFor = async (tenantId: string) => {
    const [user] = await testDb()('dashboard_users')
      .insert({
        tenant_id: tenantId,
        email: `viewer-${crypto.randomUUID()}@example.com`,
        role: 'viewer',
        password_hash: 'x',
      })
      .returning(['id', 'tenant_id', 'email', 'role']);
    return `${SESSION_COOKIE}=${(await createSession(testDb(), user)).token}`;
  };
  const overview = async (cookie: string) => {
    const r = await fetch(`${stack.dashboardUrl}/overview`, { headers: { cookie } });
    expect(r.status).toBe(200);
    return r.text();
  };
  /** The row's cells: [p95 text, measured count]. */
  const row = (page: string, id: string) => {
    const m = new RegExp(`<tr id="${id}"><th scope="row">[^<]*</th><td>([^<]*)</td><td>(\\d+)</td></tr>`).exec(page);
    return m ? [m[1], Number(m[2])] : null;
  };

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    stack = await startStack('tsx', {
      OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: '1',
      // The run's workflow bundle, not one per worker process (test/ops/metrics.test.ts keeps a
      // worker process bundling from sources at start, as `npm start` does without the variable).
      WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    });
    await createEndpoint(`${stack.apiUrl}/v1`, stack.tenant.secret_key, {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      description: 'latency',
    });
    const checkout = await stack.checkout('latency_user');
    expect(checkout.events.map((e) => e.status)).toEqual([200, 200, 200]);
  }, STACK_START_MS);
  afterAll(async () => {
    await stack?.stop();
    receiver?.close();
  });

  it('the api observes the provisional grant and the worker the authoritative write, per provider, no tenant label', async () => {
    const api = await until(
      'the provisional lag observed',
      () => scrape(stack.apiMetricsPort),
      (s) =>
        (sample(s, 'billing_receipt_to_premium_seconds_count', { provider: 'psp_a', source: 'provisional' }) ?? 0) >= 1,
      30_000,
    );
    const worker = await until(
      'the authoritative lag observed',
      () => scrape(stack.workerMetricsPort),
      (s) =>
        (sample(s, 'billing_receipt_to_premium_seconds_count', { provider: 'psp_a', source: 'authoritative' }) ?? 0) >=
        1,
      60_000,
    );
    const outbound = await until(
      'the delivered event observed',
      () => scrape(stack.outboundWorkerMetricsPort!),
      (s) => (sample(s, 'billing_outbound_event_to_delivered_seconds_count') ?? 0) >= 1,
      60_000,
    );
    expect(received.length).toBeGreaterThanOrEqual(1);
    // The provisional grant is part of the receipt's own statement: well under the objective's second.
    expect(
      sample(api, 'billing_receipt_to_premium_seconds_bucket', {
        provider: 'psp_a',
        source: 'provisional',
        le: '+Inf',
      }),
    ).toBeGreaterThanOrEqual(1);
    const lines = [api, worker, outbound].flatMap((t) =>
      t.split('\n').filter((l) => /^billing_(receipt_to_premium|outbound_event_to_delivered)_seconds/.test(l)),
    );
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) {
      expect(l).not.toContain(stack.tenant.tenant_id);
      expect(l).not.toMatch(/tenant/);
      expect(l).not.toContain('latency_user');
    }
  });

  it("the overview shows the tenant's own p95 of the last hour, not another tenant's; none: says so", async () => {
    const t = stack.tenant.tenant_id;
    // Another tenant's slow hour: 42 s to premium, 50 s to the write, nothing of it on our page.
    const other = await makeTenant('latency-other');
    await testDb()('webhook_deliveries').insert(
      ['evt_o1', 'evt_o2'].map((id) => ({
        tenant_id: other.tenant_id,
        provider: 'psp_a',
        event_id: `${id}_${crypto.randomUUID().slice(0, 6)}`,
        event_type: 'checkout.completed',
        status: 'processed',
        payload: '{}',
        created_at: testDb().raw(`now() - interval '10 minutes'`),
        premium_at: testDb().raw(`now() - interval '10 minutes' + interval '42 seconds'`),
        processed_at: testDb().raw(`now() - interval '10 minutes' + interval '50 seconds'`),
      })),
    );
    await until(
      'the deliveries processed',
      () => testDb()('webhook_deliveries').where({ tenant_id: t }).whereNotNull('subscription_id').count('* as n'),
      (r) => Number(r[0].n) >= 1,
      60_000,
    );
    await until(
      'an event delivered',
      () => testDb()('outbound_deliveries').where({ tenant_id: t, status: 'succeeded' }).count('* as n'),
      (r) => Number(r[0].n) >= 1,
      60_000,
    );
    const writes = async () => Number((await testDb()('audit_entries').where({ tenant_id: t }).count('* as n'))[0].n);
    const before = await writes();
    const ours = await overview(await cookieFor(t));
    expect(ours).toContain('Time to premium, last hour');
    const premium = row(ours, 'latency-premium');
    const authoritative = row(ours, 'latency-authoritative');
    const outbound = row(ours, 'latency-outbound');
    expect(premium?.[1]).toBeGreaterThanOrEqual(1);
    expect(premium?.[0]).toMatch(/^\d+ ms$/); // granted in the receipt's own statement
    expect(authoritative?.[1]).toBeGreaterThanOrEqual(1);
    expect(authoritative?.[0]).toMatch(/^\d+( ms|\.\d s)$/);
    expect(outbound?.[1]).toBeGreaterThanOrEqual(1);
    expect(ours).not.toContain('42.0 s');
    expect(ours).not.toContain('50.0 s');
    expect(ours).not.toContain('No purchases in the last hour');
    expect(await writes()).toBe(before);

    const theirs = await overview(await cookieFor(other.tenant_id));
    expect(row(theirs, 'latency-premium')).toEqual(['42.0 s', 2]);
    // Not linked to a subscription: not a purchase applied; the outbound row measured nothing of ours.
    expect(row(theirs, 'latency-outbound')).toEqual(['—', 0]);

    const empty = await makeTenant('latency-empty');
    const none = await overview(await cookieFor(empty.tenant_id));
    expect(none).toContain('No purchases in the last hour');
    expect(row(none, 'latency-premium')).toBeNull();
    expect((await call(stack.apiUrl, '/v1/tenant', stack.tenant.secret_key)).status).toBe(200);
  });
});
