import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingKeys } from '../../db/signing-key-service';
import { ROTATION_INTERVAL_MS } from '../../domain/signing-keys';
import { ensureSigningKeySchedule, signingKeyScheduleId } from '../../temporal/signing-key-schedule';
import { scratchDatabase } from '../helpers/scratch-db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * The key rotation Schedule (docs/entitlement-tokens.md, "Rotating and withdrawing keys"): ensured
 * idempotently, each tick rotates only a key that has signed for the interval. Its own database:
 * a rotation in the run's would change what other files sign with.
 */
describe('the signing key rotation schedule', () => {
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  beforeAll(async () => {
    db = await scratchDatabase('rotation');
    worker = await startTestWorker({ db: db.app });
  }, 120_000);
  afterAll(async () => {
    await worker?.client.schedule
      .getHandle(signingKeyScheduleId(worker.taskQueue))
      .delete()
      .catch(() => undefined);
    await worker?.stop();
    await db?.drop();
  });

  const tick = async () => {
    const handle = worker.client.schedule.getHandle(signingKeyScheduleId(worker.taskQueue));
    const runOf = (a: { action: { workflow: { firstExecutionRunId: string } } }) =>
      a.action.workflow.firstExecutionRunId;
    const seen = new Set((await handle.describe()).info.recentActions.map(runOf));
    await handle.trigger();
    const d = await until(
      'the triggered rotation run',
      () => handle.describe(),
      (x) => x.info.recentActions.some((a) => !seen.has(runOf(a))),
      30_000,
    );
    const { workflowId, firstExecutionRunId } = d.info.recentActions.find((a) => !seen.has(runOf(a)))!.action.workflow;
    return (await worker.client.workflow.getHandle(workflowId, firstExecutionRunId).result()) as {
      kid: string;
      rotated: boolean;
    };
  };

  it('is made once (a second ensure changes nothing), daily, on the deployment’s queue', async () => {
    expect(await ensureSigningKeySchedule(worker.client, worker.taskQueue)).toBe('created');
    expect(await ensureSigningKeySchedule(worker.client, worker.taskQueue)).toBe('unchanged');
    const d = await worker.client.schedule.getHandle(signingKeyScheduleId(worker.taskQueue)).describe();
    expect(d.spec.intervals?.[0].every).toBe(24 * 3_600_000);
    expect(d.action.type === 'startWorkflow' && d.action.taskQueue).toBe(worker.taskQueue);
  });

  it('a tick leaves a young key signing and rotates one that has signed for the interval', async () => {
    const keys = signingKeys(db.app, worker.vault);
    await keys.ensureSigningKey();
    const first = (await db.owner('signing_keys').where({ state: 'active' }).first()).kid;
    expect(await tick()).toEqual({ kid: first, rotated: false });
    await db
      .owner('signing_keys')
      .where({ kid: first })
      .update({ created_at: new Date(Date.now() - ROTATION_INTERVAL_MS - 60_000) });
    const rotated = await tick();
    expect(rotated.rotated).toBe(true);
    expect(rotated.kid).not.toBe(first);
    expect((await keys.publishedJwks()).keys.map((k) => k.kid)).toEqual([rotated.kid, first]);
  });
});
