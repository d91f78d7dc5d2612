import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthRecords, UNUSED_CLIENTS_BINDINGS, UNUSED_CLIENTS_SQL } from '../../db/oauth-records';
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
    await testDb()('oauth_records')
      .whereRaw(`payload::text like ?`, [`%${mark}-%`])
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
    // No registration is old enough to go yet (every other file's is minutes old at most).
    expect(result).toEqual({ deleted: 4, clients: 0, more: true });
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

  it('client registrations no live record names go once unused (a day if never used, 30 days otherwise); in use, they stay', async () => {
    const DAY = 24 * 3600;
    const client = (name: string) => `${mark}-client-${name}`;
    const register = (name: string) =>
      new OAuthRecords(appDb(), 'Client').upsert(client(name), { client_id: client(name), client_name: name });
    const age = (name: string, t: { created: number; used?: number }) =>
      testDb()('oauth_records')
        .where({ model: 'Client', id_hash: hash(client(name)) })
        .update({
          created_at: testDb().raw(`now() - make_interval(secs => ?)`, [t.created]),
          used_at: t.used === undefined ? null : testDb().raw(`now() - make_interval(secs => ?)`, [t.used]),
        });
    const names = ['never-used', 'abandoned', 'live-token', 'pending-sign-in', 'recent', 'new', 'just-used'];
    for (const n of names) await register(n);
    await age('never-used', { created: 2 * DAY }); // registered two days ago, nothing since
    await age('abandoned', { created: 90 * DAY, used: 31 * DAY });
    await age('live-token', { created: 90 * DAY, used: 31 * DAY });
    await age('pending-sign-in', { created: 2 * DAY });
    await age('recent', { created: 90 * DAY, used: 29 * DAY });
    await age('new', { created: 3600 }); // an hour old, never used: within its day
    await age('just-used', { created: 2 * DAY });
    // What references a registration, as the authorization server writes it: a token (and its
    // write marks the registration used, though the age above is put back after it).
    await new OAuthRecords(appDb(), 'AccessToken').upsert(
      `${mark}-token-of-live`,
      { clientId: client('live-token'), kind: 'AccessToken' },
      3600,
    );
    await age('live-token', { created: 90 * DAY, used: 31 * DAY });
    await new OAuthRecords(appDb(), 'Interaction').upsert(
      `${mark}-pending`,
      { params: { client_id: client('pending-sign-in') }, kind: 'Interaction' },
      600,
    );
    await age('pending-sign-in', { created: 2 * DAY });
    // A registration access token an older version of the service issued goes with its client.
    await new OAuthRecords(appDb(), 'RegistrationAccessToken').upsert(`${mark}-rat`, {
      clientId: client('abandoned'),
    });
    // A sign-in started with a registration two days old: the write marks it used now.
    await new OAuthRecords(appDb(), 'Interaction').upsert(
      `${mark}-started`,
      { params: { client_id: client('just-used') } },
      600,
    );
    const used = await testDb()('oauth_records')
      .where({ model: 'Client', id_hash: hash(client('just-used')) })
      .first('used_at');
    expect(Date.now() - new Date(used.used_at).getTime()).toBeLessThan(60_000);

    const clients = names.map((n) => ({ model: 'Client', id: client(n) }));
    const result = await worker.client.workflow.execute(oauthCleanupWorkflow, {
      taskQueue: worker.taskQueue,
      workflowId: `oauth-cleanup-clients-${mark}`,
      args: [{ batch: 1, batches: 20 }],
    });
    expect(result.clients).toBe(2);
    expect(result.more).toBe(false);
    expect(await present(clients)).toEqual(['live-token', 'pending-sign-in', 'recent', 'new', 'just-used'].map(client));
    expect(await present([{ model: 'RegistrationAccessToken', id: `${mark}-rat` }])).toEqual([]);
    // Bounded: one batch of one takes one registration, the oldest use first.
    await register('older');
    await register('oldest');
    await age('older', { created: 90 * DAY, used: 40 * DAY });
    await age('oldest', { created: 90 * DAY, used: 50 * DAY });
    const one = await worker.client.workflow.execute(oauthCleanupWorkflow, {
      taskQueue: worker.taskQueue,
      workflowId: `oauth-cleanup-clients-bounded-${mark}`,
      args: [{ batch: 1, batches: 1 }],
    });
    expect(one).toMatchObject({ clients: 1, more: true });
    expect(
      await present([
        { model: 'Client', id: client('older') },
        { model: 'Client', id: client('oldest') },
      ]),
    ).toEqual([client('older')]);
  });

  it('the lookups are indexed: the records naming a registration, and both candidate lists', async () => {
    const plan = await testDb().transaction(async (trx) => {
      await trx.raw('set local enable_seqscan = off');
      const { rows } = await trx.raw(`explain (format json) ${UNUSED_CLIENTS_SQL}`, { ...UNUSED_CLIENTS_BINDINGS(10) });
      return JSON.stringify(rows[0]['QUERY PLAN']);
    });
    for (const index of ['oauth_records_client_ref', 'oauth_records_client_unused', 'oauth_records_client_used'])
      expect(plan).toContain(`"Index Name":"${index}"`);
  });
});
