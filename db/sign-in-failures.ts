import type { Tx } from './transaction';

/**
 * Wrong passwords checked against a member's account since their last successful log-in
 * (migration 054), told to them at the next one (docs/limits.md). Counted per client address
 * key, by its SHA-256 only. All run in the account's tenant transaction.
 */

export interface SignInFailures {
  attempts: number;
  addresses: number;
}

/** One more wrong password for this member from this address key. */
export async function noteSignInFailure(
  trx: Tx,
  tenantId: string,
  userId: string,
  addressKeyHash: string,
): Promise<void> {
  await trx.raw(
    `insert into dashboard_sign_in_failures (tenant_id, user_id, address_key_hash, failures) values (?, ?, ?, 1)
     on conflict (user_id, address_key_hash) do update set failures = dashboard_sign_in_failures.failures + 1, last_failed_at = now()`,
    [tenantId, userId, addressKeyHash],
  );
}

/** What a member's successful log-in reports: the wrong passwords since the last one, which are then forgotten. */
export async function takeSignInFailures(trx: Tx, userId: string): Promise<SignInFailures> {
  const rows: { failures: number }[] = await trx('dashboard_sign_in_failures')
    .where({ user_id: userId })
    .del()
    .returning('failures');
  return { attempts: rows.reduce((n, r) => n + r.failures, 0), addresses: rows.length };
}

/** What the log-in that made this session found, for its overview; nothing when there were none. */
export async function sessionSignInFailures(trx: Tx, sessionId: string): Promise<SignInFailures | undefined> {
  const row = await trx('dashboard_sessions')
    .where({ id: sessionId })
    .first('failed_sign_ins as attempts', 'failed_sign_in_addresses as addresses');
  return row && row.attempts > 0 ? row : undefined;
}
