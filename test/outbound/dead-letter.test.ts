import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, type Config } from '../../runtime/config';
import { createVault, generateMasterKey } from '../../vault/vault';
import {
  MAX_OUTBOUND_HANDOVER_ATTEMPTS,
  startOutboundDispatcher,
  type OutboundDispatcher,
} from '../../temporal/outbound-dispatcher';
import { call, newTenant, refill, startApi } from '../helpers/api';
import { appDb, testDb } from '../helpers/db';
import { until } from '../helpers/until';
import { changeEntitlement, createEndpoint, outboundConfig } from './fixtures';

/**
 * The outbound outbox's dead letter: when Temporal refuses the hand-over (signal-with-start)
 * MAX_OUTBOUND_HANDOVER_ATTEMPTS times, the group's pending deliveries end `failed` with the
 * reason, seen in the REST delivery log, and their outbox rows are gone. The refusal is the
 * run's real Temporal server's: a deployment queue at Temporal's length limit (1000) is accepted,
 * its outbound queue (domain/outbound-queue.ts, longer) is not (INVALID_ARGUMENT). Temporal
 * unreachable is not a refusal (it costs no attempt), so stopping a server would not get here.
 */
describe('outbound outbox: hand-overs Temporal refuses end failed, with the reason', () => {
  const masterKey = generateMasterKey();
  const prefix = `${inject('taskQueuePrefix')}-dead-${crypto.randomBytes(3).toString('hex')}-`;
  const taskQueue = prefix.padEnd(1000, 'q');
  const config: Config = {
    ...loadConfig({ NODE_ENV: 'test' }),
    temporalAddress: inject('temporalAddress'),
    taskQueue,
    ...outboundConfig(),
    masterKey,
  };
  const vault = createVault(masterKey);
  let api: Awaited<ReturnType<typeof startApi>>;
  let dispatcher: OutboundDispatcher;
  let t: Awaited<ReturnType<typeof newTenant>>;

  beforeAll(async () => {
    api = await startApi({ config, vault });
    t = await newTenant('outbound-dead');
    // The outbound worker's dispatcher alone: no worker could poll a queue Temporal refuses.
    dispatcher = startOutboundDispatcher({
      db: appDb(),
      config,
      vault,
      address: config.temporalAddress!,
      namespace: 'default',
      taskQueue,
      isRunning: () => true,
    });
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await api?.close();
  });

  it(`after ${MAX_OUTBOUND_HANDOVER_ATTEMPTS} refusals the pending deliveries are failed, saying why; the outbox lets them go`, async () => {
    const ep = await createEndpoint(api.apiUrl, t.secret_key, {
      url: 'http://127.0.0.1:9999/never',
      description: 'refused',
    });
    await changeEntitlement(t.tenant_id, 'user-dead', 'active', 'active');
    const rows = () => testDb()('outbound_outbox').where({ task_queue: taskQueue });
    const queued = await until('two deliveries queued for the hand-over', rows, (r) => r.length === 2);
    expect(queued.map((r: any) => r.handover.endpointId)).toEqual([ep.id, ep.id]);

    // Refused by Temporal (the request's fault): each refusal counts and the reason is kept. The
    // back-off waits are skipped (the clock, not the behaviour): a row made due is tried once more.
    const deliveries = async (q: string) => (
      await refill(t.tenant_id),
      call(api.apiUrl, `/outbound-deliveries?endpoint_id=${ep.id}${q}`, t.secret_key)
    );
    for (let n = 1; n < MAX_OUTBOUND_HANDOVER_ATTEMPTS; n++) {
      if (n > 1) await rows().update({ next_attempt_at: testDb().fn.now() });
      const tried = await until(
        `refusal ${n}`,
        rows,
        (r) => r.length === 2 && r.every((x: any) => x.attempts === n),
        30_000,
      );
      expect(tried.every((r: any) => /taskQueue length exceeds limit/.test(r.last_error ?? ''))).toBe(true);
    }
    // One refusal short of the limit the deliveries still wait.
    expect((await deliveries('&status=pending')).body.data).toHaveLength(2);
    await rows().update({ next_attempt_at: testDb().fn.now() });
    const failed = await until(
      'deliveries failed',
      () => deliveries('&status=failed'),
      (r) => r.body.data.length === 2,
      30_000,
    );
    expect(failed.body.data.map((d: any) => [d.type, d.attempts, d.delivered_at]).sort()).toEqual([
      ['entitlement.active', 0, null],
      ['subscription.status_changed', 0, null],
    ]);
    for (const d of failed.body.data) {
      expect(d.reason).toMatch(
        new RegExp(
          `^delivery could not be started after ${MAX_OUTBOUND_HANDOVER_ATTEMPTS} attempts: .*taskQueue length exceeds limit`,
        ),
      );
    }
    expect((await deliveries('&status=pending')).body.data).toEqual([]);
    expect(await rows()).toEqual([]);
  });
});
