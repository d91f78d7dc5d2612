import type { ProviderId } from './providers';

/**
 * Which proofs claim a provider account for webhook routing (docs/providers.md, "Proving an
 * account"). `oauth`: the provider's consent screen named the account. `control_api`: an
 * emulator's control API created the account for the caller (demo seed, test fixtures; never a
 * tenant path). `provider_call`: an authenticated read with the tenant's own credentials for
 * that account succeeded. `pasted_key`: a psp_b/psp_c connection proven by `provider_call`
 * in earlier builds; it still routes until an OAuth proof of the account replaces it, and is
 * never written again.
 */
export type ProofMethod = 'oauth' | 'provider_call' | 'control_api' | 'pasted_key';

/**
 * Paddle and Razorpay API keys name no account in any read (a key reaches its own seller's
 * catalogue, whatever account id is typed beside it), so a call that succeeds proves only that
 * the key works. Their accounts are claimed by OAuth alone.
 */
export const OAUTH_ONLY_PROVIDERS: readonly ProviderId[] = ['psp_b', 'psp_c'];

export const claimsOnlyByOAuth = (provider: ProviderId): boolean => OAUTH_ONLY_PROVIDERS.includes(provider);

/** Whether a proof by `method` makes the connection the account's routing owner. */
export function proofClaimsAccount(provider: ProviderId, method: ProofMethod): boolean {
  if (method === 'pasted_key') return false;
  return method !== 'provider_call' || !claimsOnlyByOAuth(provider);
}

/** Recorded on a psp_b/psp_c connection whose pasted key works: what it can do, and how its events would route. */
export const keyOnlyProofNote = (provider: ProviderId): string =>
  `the key works and is used for API calls (sync), but a pasted ${provider} key does not prove the account is yours, so its events are not routed here: connect the account with OAuth (Providers, Connect ${provider})`;

/**
 * What a connection that proved its account with a pasted key reads once the account's owner
 * connects it with OAuth: the database's `release_pasted_key_claims` writes this very text (the
 * OAuth claims test holds the two equal).
 */
export const RELEASED_BY_OAUTH =
  "no longer receives this account's events: the account was connected with OAuth by its owner. A pasted key no longer proves a psp_b or psp_c account; this connection still works for API calls. If the account is yours, connect it with OAuth (Providers, Connect) or contact support.";
