import { isAnonymousAppUserId } from './revenuecat';

/**
 * Aliases (docs/transfers.md, "Aliases are not transfers"): an app user known by more than one
 * id. One rule for both client APIs — RevenueCat's `identify` (logIn) and our SDK's
 * `POST /v1/sdk/subscribers/{id}/identify` — and for the tenant's backend merge. Reads of any of
 * the ids answer the same customer (db/revenuecat.ts `aliasedIds`); rows stay where they were
 * written, so an alias moves nothing and is no transfer.
 */

/** How many ids an identified app user absorbs at most (reads follow this many, oldest first). */
export const MAX_ALIASES = 10;

/**
 * What a sign-in from `from` as `to` does: an anonymous id (`$RCAnonymousID:` and 32 hex digits,
 * the ids RevenueCat's SDKs and ours make before anyone signs in) signing in as an identified
 * one becomes an alias of it; between two identified ids (or the same id) nothing merges — the
 * answer is simply the new user's, as RevenueCat's SDKs expect. Two identified users merge only
 * when the tenant's backend asks (`POST /v1/customers/{id}/merge`, a secret key).
 */
export function identifyOutcome(from: string, to: string): 'alias' | 'none' {
  return from !== to && isAnonymousAppUserId(from) && !isAnonymousAppUserId(to) ? 'alias' : 'none';
}

/** Where the ids of a backend merge stand now. */
export interface MergeFacts {
  from: string;
  into: string;
  /** Whom `from` is already an alias of, if anyone. */
  fromAliasOf: string | null;
  /** Whom `into` is an alias of, if anyone. */
  intoAliasOf: string | null;
  /** How many aliases `into` would hold after the merge (`from`, its own aliases, and those `into` has). */
  aliasesAfter: number;
}

export type MergeVerdict =
  { ok: true; already: boolean } | { ok: false; status: 400 | 409; code: string; detail: string; param: string };

/**
 * Whether the tenant's backend may merge `from` into `into`: not into itself, not into an id that
 * is itself an alias (merge into the one it names), not an id already merged elsewhere, and
 * within MAX_ALIASES. Merging again what is already merged answers the same (`already`).
 */
export function mergeVerdict(f: MergeFacts): MergeVerdict {
  if (f.from === f.into)
    return {
      ok: false,
      status: 400,
      code: 'invalid_request',
      detail: 'An app user cannot be merged into itself.',
      param: 'from_app_user_id',
    };
  if (f.fromAliasOf === f.into) return { ok: true, already: true };
  if (f.intoAliasOf !== null)
    return {
      ok: false,
      status: 409,
      code: 'customer_already_merged',
      detail: `${f.into} is itself merged into ${f.intoAliasOf}; merge into ${f.intoAliasOf} instead.`,
      param: 'app_user_id',
    };
  if (f.fromAliasOf !== null)
    return {
      ok: false,
      status: 409,
      code: 'customer_already_merged',
      detail: `${f.from} is already merged into ${f.fromAliasOf}.`,
      param: 'from_app_user_id',
    };
  if (f.aliasesAfter > MAX_ALIASES)
    return {
      ok: false,
      status: 409,
      code: 'too_many_aliases',
      detail: `An app user holds at most ${MAX_ALIASES} other ids; this merge would make ${f.aliasesAfter}.`,
      param: 'from_app_user_id',
    };
  return { ok: true, already: false };
}
