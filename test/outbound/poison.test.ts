import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, newTenant, refill, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { DRAIN_TRIES } from '../../workflows/outbound-delivery';
import { changeEntitlement, createEndpoint, outboundConfig } from './fixtures';
import { startReceiver, type TestReceiver } from './receiver';

/**
 * A poison receiver: answers that Postgres text cannot hold (a NUL byte) are recorded, each
 * attempt on its own, so the retry window runs and the endpoint is disabled as for any failing
 * receiver; and an attempt that cannot be recorded at all costs a bounded number of POSTs, then
 * fails its delivery with a reason the log shows. Real receivers on loopback, the real worker.
 */
describe('outbound webhooks: a poison receiver', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  const receivers: TestReceiver[] = [];
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };
  const get = async (path: string) => (await refill(t.tenant_id), call(api.apiUrl, path, t.secret_key));
  const attemptsOf = async (deliveryId: string) =>
    (await get(`/outbound-deliveries/${deliveryId}/attempts?limit=100`)).body.data.sort(
      (a: any, b: any) => a.attempt - b.attempt,
    );

  beforeAll(async () => {
    // A failing drain's tries 100 ms, 200 ms, 400 ms, 800 ms apart (1 s, 2 s, 4 s, 8 s by default): the same five tries.
    worker = await startTestWorker({ config: outboundConfig({ drainRetryMs: 100 }), outbound: true });
    api = await startApi({ config: worker.config, vault: worker.vault });
    t = await newTenant('outbound-poison');
  });
  beforeEach(() => refill(t.tenant_id));
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('an answer holding a NUL byte is recorded (escaped): delivered on a 2xx; on a 500 every attempt is logged until the window closes, then the delivery fails, the endpoint is disabled and the POSTs stop', async () => {
    const ok = await receiver();
    ok.script.push({ status: 200, body: 'fine\u0000thanks' });
    const epOk = await createEndpoint(api.apiUrl, t.secret_key, { url: ok.url, event_types: ['entitlement.active'] });
    await changeEntitlement(t.tenant_id, 'user-nul-ok', 'active', 'active');
    const delivered = await until(
      'delivered',
      () => get(`/outbound-deliveries?endpoint_id=${epOk.id}`),
      (r) => r.body.data[0]?.status === 'succeeded',
    );
    expect(
      (await attemptsOf(delivered.body.data[0].id)).map((a: any) => [a.attempt, a.status_code, a.response_excerpt]),
    ).toEqual([[1, 200, 'fine\\u0000thanks']]);
    expect(ok.received).toHaveLength(1);

    const poison = await receiver();
    for (let i = 0; i < 200; i++) poison.script.push({ status: 500, body: `no\u0000${i}` });
    const ep = await createEndpoint(api.apiUrl, t.secret_key, {
      url: poison.url,
      event_types: ['entitlement.revoked'],
    });
    await changeEntitlement(t.tenant_id, 'user-nul', 'refunded', 'revoked');
    const disabled = await until(
      'endpoint disabled',
      () => get(`/webhook-endpoints/${ep.id}`),
      (r) => r.body.enabled === false,
      40_000,
    );
    expect(disabled.body.disabled_reason).toMatch(
      /^disabled automatically: no 2xx within the retry window \(8 s\); last: HTTP 500/,
    );
    const failed = (await get(`/outbound-deliveries?endpoint_id=${ep.id}`)).body.data;
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ status: 'failed', last_status_code: 500 });
    expect(failed[0].reason).toMatch(/no 2xx within the retry window/);
    const attempts = await attemptsOf(failed[0].id);
    // Each POST the receiver saw is an attempt in the log, with the answer it gave: none sent unrecorded.
    expect(attempts.length).toBeGreaterThan(2);
    expect(attempts.length).toBe(poison.received.length);
    expect(failed[0].attempts).toBe(attempts.length);
    attempts.forEach((a: any, i: number) =>
      expect([a.attempt, a.status_code, a.response_excerpt]).toEqual([i + 1, 500, `no\\u0000${i}`]),
    );
    // And nothing more is sent once it has failed.
    const seen = poison.received.length;
    await new Promise((r) => setTimeout(r, 3000));
    expect(poison.received.length).toBe(seen);
  }, 60_000);

  it(`an attempt that cannot be recorded at all is posted ${DRAIN_TRIES} times (the drain's tries), then its delivery fails with the reason in the log, and the POSTs stop`, async () => {
    const rx = await receiver();
    const ep = await createEndpoint(api.apiUrl, t.secret_key, {
      url: rx.url,
      event_types: ['entitlement.grace_period'],
    });
    // Whatever this endpoint's attempts are, the database refuses to store them (standing in for
    // a row no sanitising can save): neither the attempt as it was nor without the answer.
    const fn = `refuse_attempts_${ep.id.replace(/-/g, '')}`;
    await testDb().raw(`create function ${fn}() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from outbound_deliveries d where d.id = new.delivery_id and d.endpoint_id = '${ep.id}') then
          raise exception 'attempt refused by the test';
        end if;
        return new;
      end $$`);
    await testDb().raw(`create trigger ${fn} before insert on outbound_attempts for each row execute function ${fn}()`);
    try {
      await changeEntitlement(t.tenant_id, 'user-unrecordable', 'past_due', 'grace_period');
      const failed = await until(
        'failed',
        () => get(`/outbound-deliveries?endpoint_id=${ep.id}`),
        (r) => r.body.data[0]?.status === 'failed',
        45_000,
      );
      expect(failed.body.data[0].reason).toBe(
        `the drain failed ${DRAIN_TRIES} times in a row: the attempt of 1 delivery could not be recorded`,
      );
      expect(rx.received).toHaveLength(DRAIN_TRIES);
      expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      await new Promise((r) => setTimeout(r, 3000));
      expect(rx.received).toHaveLength(DRAIN_TRIES);
      // Failing one delivery does not disable the endpoint (its window is not over); the next event goes out.
      expect((await get(`/webhook-endpoints/${ep.id}`)).body.enabled).toBe(true);
    } finally {
      await testDb().raw(`drop trigger if exists ${fn} on outbound_attempts`);
      await testDb().raw(`drop function if exists ${fn}()`);
    }
  }, 60_000);
});
