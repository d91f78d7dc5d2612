import crypto from 'node:crypto';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previousDay } from '../../domain/event-digest';
import { SCOPES, type Scope } from '../../domain/scopes';
import { withTenant } from '../../db/tenant-tx';
import { digestRoot, headsOfDay, verifyDigest, type Digest } from '../../examples/receiver/digest';
import { eventDigestScheduleId, ensureEventDigestSchedule } from '../../temporal/event-digest-schedule';
import { call, keyWith, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeEntitlement } from '../helpers/factories';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * The signed daily digest (docs/event-proofs.md, "Daily digest"): made by the Temporal Schedule,
 * answered by GET /v1/digests/{date}, its signature checked by the documented verifier
 * (examples/receiver/digest.ts, jose against /.well-known/jwks.json) and its root recomputed
 * independently from the customers' events and from the export's events file; agreed by the export.
 */
describe('daily digests', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  const users = [0, 1, 2].map((i) => `digest_${i}_${crypto.randomUUID()}`);
  const day = previousDay(Date.now());
  let jwks: any;
  /** What a verifier does: reads the published keys when it checks (the first signature made the first key). */
  const publishedKeys = async () =>
    (jwks = await (await fetch(api.apiUrl.replace(/\/v1$/, '') + '/.well-known/jwks.json')).json());

  const digestOf = (key: string, date: string) => call(api.apiUrl, `/digests/${date}`, key);

  beforeAll(async () => {
    worker = await startTestWorker();
    api = await startApi({ config: worker.config });
    t = await newTenant('digests');
    for (const user of users) {
      const e = await makeEntitlement(t.tenant_id, { appUserId: user });
      await withTenant(testDb(), t.tenant_id, (trx) =>
        trx('entitlements').where({ id: e.id }).update({ state: 'grace_period' }),
      );
    }
    // The events were recorded yesterday (UTC); one more today, which yesterday's digest leaves out.
    await testDb()('outbound_events')
      .where({ tenant_id: t.tenant_id })
      .update({ created_at: testDb().raw(`(?::date + time '12:00') at time zone 'UTC'`, [day]) });
    const [e0] = await testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: users[0] });
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ id: e0.id }).update({ state: 'expired' }),
    );
  }, 120_000);
  afterAll(async () => {
    await worker?.client.schedule
      .getHandle(eventDigestScheduleId(worker.config.taskQueue))
      .delete()
      .catch(() => undefined);
    await api?.close();
    await worker?.stop();
  });

  it('the Schedule makes yesterday’s digest; it verifies against the published keys and its root is the chains’', async () => {
    expect(await ensureEventDigestSchedule(worker.client, worker.config.taskQueue)).toBe('created');
    expect(await ensureEventDigestSchedule(worker.client, worker.config.taskQueue)).toBe('unchanged');
    await worker.client.schedule.getHandle(eventDigestScheduleId(worker.config.taskQueue)).trigger();
    await until(
      'the digest is made',
      () => testDb()('event_digests').where({ tenant_id: t.tenant_id }),
      (rows) => rows.length === 1,
      30_000,
    );
    const r = await digestOf(t.secret_key, day);
    expect(r.status).toBe(200);
    const digest = r.body as Digest;
    expect(Object.keys(digest).sort()).toEqual(['date', 'events', 'root', 'signature', 'tenant_id']);
    expect(digest).toMatchObject({ date: day, tenant_id: t.tenant_id, events: 9 });
    await verifyDigest(digest, await publishedKeys());
    await expect(verifyDigest({ ...digest, events: 8 }, jwks)).rejects.toThrow();

    // The root from the customers' own events: each one's last hash of the day.
    const heads: string[] = [];
    for (const user of users) {
      const ev = (await call(api.apiUrl, `/customers/${user}/events`, t.secret_key)).body.data;
      expect(ev).toHaveLength(users[0] === user ? 4 : 3);
      heads.push(ev[2].data.hash);
    }
    expect(digest.root).toBe(digestRoot(heads));

    // The same answer again: stored, not re-made.
    expect((await digestOf(t.secret_key, day)).body).toEqual(digest);
  });

  it('an export’s events file agrees with the digest: count and root', async () => {
    const started = await call(api.apiUrl, '/exports', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ format: 'parquet' }),
    });
    const done = await until(
      'export finished',
      async () => (await call(api.apiUrl, `/exports/${started.body.id}`, t.secret_key)).body,
      (b) => b.status !== 'running',
      60_000,
    );
    const file = done.files.find((f: any) => f.table === 'events');
    const res = await fetch(`${api.apiUrl}/exports/${done.id}/files/${file.name}`, {
      headers: { authorization: `Bearer ${t.secret_key}` },
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const rows = (await parquetReadObjects({ file: bytes.buffer as ArrayBuffer })) as any[];
    const { heads, events } = headsOfDay(rows, day);
    const digest = (await digestOf(t.secret_key, day)).body;
    expect(events).toBe(digest.events);
    expect(digestRoot(heads)).toBe(digest.root);
  });

  it('another tenant’s digest of the day is its own (nothing of this one’s); today has none yet; bad dates are 400', async () => {
    const other = await newTenant('digests-other');
    const theirs = await digestOf(other.secret_key, day);
    expect(theirs.status).toBe(200);
    expect(theirs.body).toMatchObject({ tenant_id: other.tenant_id, events: 0, root: digestRoot([]) });
    await verifyDigest(theirs.body, jwks);
    expect((await digestOf(t.secret_key, new Date().toISOString().slice(0, 10))).status).toBe(404);
    for (const bad of ['2026-02-30', 'yesterday', '20261127', '1999-12-31']) {
      const r = await digestOf(t.secret_key, bad);
      expect([bad, r.status, r.body.param]).toEqual([bad, 400, 'date']);
    }
  });

  it('needs exports:read', async () => {
    const others = (await keyWith(t.tenant_id, SCOPES.filter((s) => s !== 'exports:read') as Scope[])).secret_key;
    expect((await digestOf(others, day)).status).toBe(403);
    const reader = (await keyWith(t.tenant_id, ['exports:read'])).secret_key;
    expect((await digestOf(reader, day)).status).toBe(200);
  });
});
