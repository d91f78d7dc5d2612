import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthRecords } from '../../db/oauth-records';
import { ensureOAuthCleanupSchedule, oauthCleanupScheduleId } from '../../temporal/oauth-cleanup-schedule';
import { oauthCleanupWorkflow } from '../../workflows/oauth-cleanup';
import { appDb, testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * Expired sign-in records (docs/assistant-sign-in.md, "Expired records"): the hourly Schedule,
 * ensured idempotently, runs a workflow that deletes the authorization server's records past
 * their expiry in bounded batches, and leaves live ones and client registrations alone. The
 * records are written by the adapter the authorization server uses (db/oauth-records.ts), as it
 * writes them. Only rows past their expiry are deleted, so the run's shared database is safe to
 * clean: no other file can still use such a row.
 */
describe('expired sign-in records are deleted by a bounded periodic job', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  const mark = crypto.randomBytes(4).toString('hex');
  // Expired long ago (seconds from now; one apart, so the oldest-first order is known), older than
  // anything another file writes: a bounded run takes exactly these first.
  const LONG_AGO = -30 * 365 * 24 * 3600;
  const expired = ['AuthorizationCode', 'Session', 'Grant', 'RefreshToken', 'AccessToken'].map((model, i) => ({
    model,
    id: `${mark}-expired-${model}`,
    expiresIn: LONG_AGO + i,
  }));
  const live = [
    { model: 'AccessToken', id: `${mark}-live-token`, expiresIn: 3600 },
    { model: 'Client', id: `${mark}-client`, expiresIn: undefined },
  ];
  const hash = (id: string) => crypto.createHash('sha256').update(id).digest('hex');
  const present = async (rows: { model: string; id: string }[]) => {
    const found = await testDb()('oauth_records')
      .whereIn(
        'id_hash',
        rows.map((r) => hash(r.id)),
      )
      .pluck('id_hash');
    return rows.filter((r) => found.includes(hash(r.id))).map((r) => r.id);
  };

  beforeAll(async () => {
    worker = await startTestWorker();
    for (const r of [...expired, ...live])
      await new OAuthRecords(appDb(), r.model).upsert(r.id, { grantId: `${mark}-grant`, kind: r.model }, r.expiresIn);
  });
  afterAll(async () => {
    await worker?.client.schedule
      .getHandle(oauthCleanupScheduleId(worker.taskQueue))
      .delete()
      .catch(() => undefined);
    await testDb()('oauth_records')
      .whereIn(
        'id_hash',
        [...expired, ...live].map((r) => hash(r.id)),
      )
      .del();
    await worker?.stop();
  });

  it('a run deletes at most its batches, oldest expiry first, and says more are left', async () => {
    expect(await present(expired)).toHaveLength(5);
    const result = await worker.client.workflow.execute(oauthCleanupWorkflow, {
      taskQueue: worker.taskQueue,
      workflowId: `oauth-cleanup-test-${mark}`,
      args: [{ batch: 2, batches: 2 }],
    });
    expect(result).toEqual({ deleted: 4, more: true });
    expect(await present(expired)).toEqual([`${mark}-expired-AccessToken`]);
    expect(await present(live)).toEqual(live.map((r) => r.id));
  });

  it('the hourly Schedule is made once and its tick deletes what is left; live tokens and registrations stay', async () => {
    expect(await ensureOAuthCleanupSchedule(worker.client, worker.taskQueue)).toBe('created');
    expect(await ensureOAuthCleanupSchedule(worker.client, worker.taskQueue)).toBe('unchanged');
    const handle = worker.client.schedule.getHandle(oauthCleanupScheduleId(worker.taskQueue));
    const d = await handle.describe();
    expect(d.spec.intervals?.[0].every).toBe(3_600_000);
    expect(d.action.type === 'startWorkflow' && d.action.taskQueue).toBe(worker.taskQueue);

    await handle.trigger();
    const ran = await until(
      'the triggered cleanup run',
      () => handle.describe(),
      (x) => x.info.recentActions.length > 0,
      30_000,
    );
    const { workflowId, firstExecutionRunId } = ran.info.recentActions[0].action.workflow;
    const result = (await worker.client.workflow.getHandle(workflowId, firstExecutionRunId).result()) as {
      deleted: number;
      more: boolean;
    };
    expect(result.deleted).toBeGreaterThanOrEqual(1);
    expect(await present(expired)).toEqual([]);
    expect(await present(live)).toEqual(live.map((r) => r.id));
  });
});
