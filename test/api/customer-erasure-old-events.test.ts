import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previousDay } from '../../domain/event-digest';
import { withTenant } from '../../db/tenant-tx';
import { digestRoot } from '../../examples/receiver/digest';
import { links, type CustomerEvent } from '../../examples/receiver/event-chain';
import { call, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { verifyChain } from '../helpers/event-chain-verify';
import { makeEntitlement } from '../helpers/factories';
import { startTestWorker } from '../helpers/temporal';
import { dumpForms, tenantRowsAsText } from '../helpers/tenant-dump';

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
const ZEROS = '0'.repeat(64);

/**
 * Erasing a customer whose chain began before the ids (or anything) were in the proof form
 * (docs/event-proofs.md, "Erasure"): events written as migration 068 wrote them (hashed over `data`
 * itself) and as 069 to 075 did (an email hashed, the id in clear) cannot be re-hashed. Erasure still
 * takes the ids out of their stored bodies and marks them `redacted`; their recorded `hash`, every
 * later link and the signed digest stay, and the events recorded since (`"proof": 2`) check in full.
 */
describe('erasing a customer with events from before the proof form', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  const user = `old_${crypto.randomUUID()}`;
  // A purchase made without an app user, from before 069: its chain is the buyer's email's.
  const buyer = `old.${crypto.randomUUID().slice(0, 8)}@example.com`;
  const day = previousDay(Date.now());
  const chainKey = (tenantId: string, id: string) => `sub-${sha256(`${tenantId}:${id}`).slice(0, 32)}`;
  const eventsOf = async (who: string) =>
    (await call(api.apiUrl, `/customers/${encodeURIComponent(who)}/events?limit=200`, t.secret_key)).body.data;
  const erase = (who: string) =>
    call(api.apiUrl, `/customers/${encodeURIComponent(who)}/erase`, t.secret_key, { method: 'POST' });

  /** An event recorded as the service did before: `hashOf` is the rule of its time. */
  async function recordOld(
    who: string,
    sequence: number,
    prev: string,
    fields: Record<string, unknown>,
    hashOf: (data: Record<string, unknown>) => string,
  ): Promise<string> {
    const data: Record<string, unknown> = {
      app_user_id: who,
      state: 'active',
      previous_state: null,
      source: 'paid',
      provider: 'psp_a',
      sequence,
      entitlements: [],
      prev_hash: prev,
      ...fields,
    };
    const hash = hashOf(data);
    const id = crypto.randomUUID();
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      await trx('outbound_events').insert({
        id,
        tenant_id: t.tenant_id,
        type: 'entitlement.active',
        order_key: chainKey(t.tenant_id, who),
        sequence,
        body: {
          id,
          type: 'entitlement.active',
          version: 1,
          timestamp: new Date().toISOString(),
          data: { ...data, hash },
        },
      });
      await trx.raw(
        `insert into customer_event_sequences (tenant_id, subject, seq, last_hash) values (?, ?, ?, ?)
           on conflict (tenant_id, subject) do update set seq = excluded.seq, last_hash = excluded.last_hash`,
        [t.tenant_id, who, sequence, hash],
      );
    });
    return hash;
  }
  // 068: over `data` itself. 069-075: an email as its SHA-256, the id in clear.
  const hashed068 = (data: Record<string, unknown>) => sha256(canonicalize(data)!);
  const hashed069 = (data: Record<string, unknown>) =>
    sha256(
      canonicalize(
        Object.fromEntries(
          Object.entries(data).map(([k, v]) =>
            typeof v === 'string' && /@.+\./.test(v) ? [`${k}_sha256`, sha256(v)] : [k, v],
          ),
        ),
      )!,
    );

  beforeAll(async () => {
    worker = await startTestWorker();
    api = await startApi({ config: worker.config });
    t = await newTenant('erasure-old');
    const h1 = await recordOld(user, 1, ZEROS, {}, hashed068);
    await recordOld(user, 2, h1, { known_as: [] }, hashed069);
    // Recorded since: chained on, in the proof form that hashes the ids.
    await makeEntitlement(t.tenant_id, { appUserId: user });
    await recordOld(buyer, 1, ZEROS, {}, hashed068);
    await makeEntitlement(t.tenant_id, { appUserId: buyer, provider: 'psp_a' });
    await testDb()('outbound_events')
      .where({ tenant_id: t.tenant_id })
      .update({ created_at: testDb().raw(`(?::date + time '12:00') at time zone 'UTC'`, [day]) });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('redacts the old bodies, keeps every hash, link and the digest; the later events check in full', async () => {
    const before = await eventsOf(user);
    expect(before.map((e: any) => [e.data.sequence, e.data.proof ?? null])).toEqual([
      [1, null],
      [2, null],
      [3, 2],
      [4, 2],
    ]);
    verifyChain(before);
    const digest = (await call(api.apiUrl, `/digests/${day}`, t.secret_key)).body;
    const buyerBefore = await eventsOf(buyer);

    const r = await erase(user);
    expect(r.status).toBe(200);
    expect(r.body.removed.event_bodies).toBe(4);
    const rb = await erase(buyer);
    expect(rb.status).toBe(200);

    const after: CustomerEvent[] = await eventsOf(r.body.erased_as);
    expect(after.map((e) => e.data.hash)).toEqual(before.map((e: any) => e.data.hash));
    // The two old ones are redacted (the id gone, its SHA-256 in its place), the two since are not.
    expect(after.map((e) => e.redacted ?? false)).toEqual([true, true, false, false]);
    for (const e of after) {
      expect(e.data).not.toHaveProperty('app_user_id');
      expect(e.data.app_user_id_sha256).toBe(sha256(user));
    }
    verifyChain(after, { redacted: 2 });
    // The receiver in examples/ accepts every link: a redacted event at its recorded hash.
    let prev = ZEROS;
    for (const e of after) {
      expect(links(prev, e)).toBe(true);
      prev = e.data.hash;
    }
    // A forged redacted event still breaks its link (the next prev_hash commits to the recorded hash).
    expect(links(ZEROS, { ...after[1], redacted: true })).toBe(false);

    const buyerAfter: CustomerEvent[] = await eventsOf(rb.body.erased_as);
    expect(buyerAfter.map((e) => e.redacted ?? false)).toEqual(buyerBefore.map((_: unknown, i: number) => i === 0));
    verifyChain(buyerAfter, { redacted: 1 });

    // The digest is the one signed before, and the heads after the erasure still make its root.
    const again = (await call(api.apiUrl, `/digests/${day}`, t.secret_key)).body;
    expect(again).toEqual(digest);
    expect(digestRoot([after.at(-1)!.data.hash, buyerAfter.at(-1)!.data.hash])).toBe(digest.root);

    const dump = await tenantRowsAsText(t.tenant_id);
    const found = [user, buyer].flatMap((v) =>
      dumpForms(v).flatMap((form) => dump.split('\n').filter((line) => line.includes(form))),
    );
    expect(found).toEqual([]);
  });
});
