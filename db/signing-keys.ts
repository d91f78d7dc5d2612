import type { Knex } from 'knex';
import type { SigningKeyFacts } from '../domain/signing-keys';
import type { DeploymentStatement } from './tenant-read';

/**
 * Every statement on `signing_keys` (migration 058), the deployment's signing keys: not a tenant
 * table. The private key is read as stored (a vault envelope); db/signing-key-service.ts seals
 * and opens it. Changes of which key signs run under one transaction-scoped advisory lock, so a
 * rotation by the operator and the scheduled one never make two signers.
 */

export interface SigningKeyRow extends SigningKeyFacts {
  public_jwk: { kty: string; crv: string; x: string };
}

export interface NewSigningKey {
  kid: string;
  public_jwk: SigningKeyRow['public_jwk'];
  private_key_enc: string;
}

// pg_advisory_xact_lock's key for "who signs" (any constant, unique in this schema).
const SIGNER_LOCK = 58_001;

const FACTS = ['kid', 'state', 'created_at', 'retired_at', 'public_jwk'] as const;

/** The keys that may still be published (withdrawn ones never are). */
export async function unwithdrawnKeys(db: Knex): Promise<SigningKeyRow[]> {
  return db('signing_keys').select(FACTS).whereNot({ state: 'withdrawn' });
}

/**
 * Which key signs, as a statement a tenant read sends with its BEGIN (db/tenant-read.ts): the
 * entitlement token reads its signer with the premium check's state, in one round trip.
 */
export const ACTIVE_SIGNER: DeploymentStatement = { sql: `select kid from signing_keys where state = 'active'` };

/** The sealed private key of `kid` while it signs; undefined once it no longer does (or never did). */
export async function sealedSigner(db: Knex, kid: string): Promise<string | undefined> {
  const row = await db('signing_keys').select('private_key_enc').where({ kid, state: 'active' }).first();
  return row?.private_key_enc ?? undefined;
}

/** The signer's kid and sealed private key; undefined when there is none. */
export async function activeKey(db: Knex): Promise<{ kid: string; private_key_enc: string } | undefined> {
  return db('signing_keys').select('kid', 'private_key_enc').where({ state: 'active' }).first();
}

/**
 * Adds the first signer unless one exists (two starters at once: the unique index keeps one).
 * True when this one was added.
 */
export async function insertFirstSigner(db: Knex, key: NewSigningKey): Promise<boolean> {
  const { rowCount } = await db.raw(
    `insert into signing_keys (kid, public_jwk, private_key_enc, state)
     select ?, ?::jsonb, ?, 'active' where not exists (select 1 from signing_keys where state = 'active')
     on conflict do nothing`,
    [key.kid, JSON.stringify(key.public_jwk), key.private_key_enc],
  );
  return rowCount === 1;
}

/**
 * Runs `work` in one transaction holding the signer lock, with the current signer's facts and
 * the changes of who signs.
 */
export async function withSignerLock<T>(
  db: Knex,
  work: (
    signer: SigningKeyFacts | undefined,
    ops: {
      /** The signer retires and `next` signs, from the same commit. */
      replace(next: NewSigningKey): Promise<void>;
      /** `next` signs (there is no signer: the one there was has just been withdrawn). */
      add(next: NewSigningKey): Promise<void>;
      /** The key is withdrawn, its private half erased; undefined for an unknown kid. */
      withdraw(kid: string): Promise<SigningKeyFacts | undefined>;
    },
  ) => Promise<T>,
): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [SIGNER_LOCK]);
    const signer: SigningKeyFacts | undefined = await trx('signing_keys')
      .select('kid', 'state', 'created_at', 'retired_at')
      .where({ state: 'active' })
      .first();
    const add = async (next: NewSigningKey) => {
      await trx('signing_keys').insert({
        kid: next.kid,
        public_jwk: JSON.stringify(next.public_jwk),
        private_key_enc: next.private_key_enc,
        state: 'active',
      });
    };
    return work(signer, {
      async replace(next) {
        await trx('signing_keys')
          .where({ state: 'active' })
          .update({ state: 'retired', retired_at: trx.fn.now(), private_key_enc: null });
        await add(next);
      },
      add,
      async withdraw(kid) {
        const [row] = await trx('signing_keys')
          .where({ kid })
          .update({
            state: 'withdrawn',
            private_key_enc: null,
            withdrawn_at: trx.raw('coalesce(withdrawn_at, now())'),
          })
          .returning(['kid', 'state', 'created_at', 'retired_at']);
        return row;
      },
    });
  });
}

/** One key's facts, whatever its state; undefined for an unknown kid. */
export async function keyFacts(
  db: Knex,
  kid: string,
): Promise<(SigningKeyFacts & { withdrawn_at: Date | null }) | undefined> {
  return db('signing_keys').select('kid', 'state', 'created_at', 'retired_at', 'withdrawn_at').where({ kid }).first();
}
