import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { DIGEST_JWS_TYPE, digestRoot, type DigestPayload } from '../domain/event-digest';
import type { Vault } from '../vault/vault';
import type { Row } from './row';
import { signingKeys } from './signing-key-service';
import { withTenant } from './tenant-tx';

/**
 * Signed daily digests of the tenant's event chains (docs/event-proofs.md, "Daily digest"): made
 * by the daily Schedule (workflows/event-digests.ts) or, for a day that has ended, when first
 * asked; stored once, so every later answer is the same signed bytes.
 */

const sha256 = (b: Uint8Array) => new Uint8Array(crypto.createHash('sha256').update(b).digest());

const dayBounds = `created_at >= (?::date::timestamp at time zone 'UTC') and created_at < ((?::date + 1)::timestamp at time zone 'UTC')`;

/** The day's chained events: how many, and each app user's last hash of the day. */
async function dayChains(trx: Knex.Transaction, day: string): Promise<{ events: number; heads: string[] }> {
  const { rows: n } = await trx.raw(
    `select count(*)::bigint as n from outbound_events where sequence is not null and ${dayBounds}`,
    [day, day],
  );
  const { rows: heads } = await trx.raw(
    `select distinct on (order_key) body->'data'->>'hash' as hash from outbound_events
      where sequence is not null and ${dayBounds} order by order_key, sequence desc`,
    [day, day],
  );
  return { events: Number(n[0].n), heads: heads.map((r: { hash: string }) => r.hash).filter(Boolean) };
}

export async function storedDigest(trx: Knex.Transaction, day: string): Promise<Row | undefined> {
  const { rows } = await trx.raw(
    `select day::text as day, events, chains, root, signature, created_at from event_digests where day = ?::date`,
    [day],
  );
  return rows[0];
}

/** The digest's body as the API answers it. */
export function digestBody(tenantId: string, row: Row): DigestPayload & { signature: string } {
  return {
    date: row.day as string,
    tenant_id: tenantId,
    events: Number(row.events),
    root: row.root as string,
    signature: row.signature as string,
  };
}

/**
 * The tenant's digest of `day` (which must have ended): the stored one, or made now — counted and
 * hashed in one tenant transaction, signed with the deployment's key, inserted unless another
 * process did first (then theirs is answered).
 */
export async function ensureDigest(db: Knex, vault: Vault, tenantId: string, day: string): Promise<Row> {
  const found = await withTenant(db, tenantId, (trx) => storedDigest(trx, day));
  if (found) return found;
  const chains = await withTenant(db, tenantId, (trx) => dayChains(trx, day));
  const payload: DigestPayload = {
    date: day,
    tenant_id: tenantId,
    events: chains.events,
    root: digestRoot(chains.heads, sha256),
  };
  const signature = await signingKeys(db, vault).signJws(payload, DIGEST_JWS_TYPE);
  return withTenant(db, tenantId, async (trx) => {
    await trx.raw(
      `insert into event_digests (tenant_id, day, events, chains, root, signature) values (?, ?, ?, ?, ?, ?)
        on conflict (tenant_id, day) do nothing`,
      [tenantId, day, payload.events, chains.heads.length, payload.root, signature],
    );
    return (await storedDigest(trx, day))!;
  });
}

/** Tenants with chained events on `day` and no digest of it yet, at most `max` (the daily run's page). */
export async function tenantsDueADigest(db: Knex, day: string, max: number): Promise<string[]> {
  const { rows } = await db.raw('select t as id from event_digest_tenants(?::date, ?) t', [day, max]);
  return rows.map((r: { id: string }) => r.id);
}
