import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import { resolveMasterKey } from '../vault/master-key';
import { createVault } from '../vault/vault';
import { signingKeys } from '../db/signing-key-service';

/**
 * `token-key:rotate` and `token-key:withdraw --kid K` (docs/entitlement-tokens.md, "Rotating and
 * withdrawing keys"): the deployment's signing keys, not a tenant's, so no tenant's trail
 * records them; the answer names kids only, never key material. Null: no key with that kid.
 */
export async function runTokenKey(
  db: Knex,
  config: Config,
  what: { rotate: true } | { withdraw: string },
): Promise<Record<string, unknown> | null> {
  const keys = signingKeys(db, createVault(resolveMasterKey(config)));
  if ('rotate' in what) {
    const r = await keys.rotate();
    return { kid: r.kid, retired: r.retired };
  }
  const w = await keys.withdraw(what.withdraw);
  return w && { kid: w.kid, withdrawn: true, already_withdrawn: w.already_withdrawn, new_signer: w.new_signer };
}
