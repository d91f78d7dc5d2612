import type { Knex } from 'knex';
import { readSubscriberRows } from '../../db/subscriptions';
import { readAsTenant, type DeploymentStatement } from '../../db/tenant-read';
import { cacheTtlSeconds, isPremium, isPremiumState } from '../../domain/entitlement';
import { iso } from '../../operations/paging';
import type { Row } from '../../db/row';
import { DEFAULT_ENTITLEMENT } from '../../domain/revenuecat';
import type { AppActor } from './auth';

/**
 * What the SDK is answered about one app user: GET /v1/sdk/subscribers/{id} and a store
 * purchase registration share it. A pk_test_ key sees sandbox entitlements only, pk_live_ live ones;
 * both see the app user's active grants (source `grant`, no provider), and provisional access of their side while
 * it counts (source `provisional`: a verified payment the workflow has not confirmed yet; docs/provisional-access.md).
 */
export async function subscriberView(db: Knex, actor: AppActor, appUserId: string) {
  return (await subscriberRead(db, actor, appUserId)).view;
}

/**
 * The premium check's one read, with each entitlement's id beside the answer: what an
 * entitlement token states (api/sdk/token.ts) comes from the very rows the answer does. `held`: a
 * held check's read, which also answers every id the customer is known by (it wakes on a write under
 * any of them: api/sdk/subscriber-wait.ts); otherwise `customerIds` is the id asked about alone.
 * `signer`: the token's signing key is read in the same transaction's first round trip (`signerKid`).
 */
export async function subscriberRead(
  db: Knex,
  actor: AppActor,
  appUserId: string,
  opts: { held?: boolean; signer?: DeploymentStatement } = {},
) {
  const { ents, subs, customerIds, first } = await readAsTenant(
    db,
    actor.tenantId,
    async (reader, first) => ({
      ...(await readSubscriberRows(reader, appUserId, actor.mode, { withIds: opts.held })),
      first,
    }),
    { first: opts.signer },
  );
  const entitlements = ents.map((e: Row) => ({
    source: e.source as 'paid' | 'grant' | 'provisional',
    provider: e.provider,
    state: e.state,
    is_active: isPremiumState(e.state),
    is_sandbox: e.is_sandbox,
    product_id: e.product_id ?? null,
    sku: e.sku ?? null,
    // The identifier the app asks for: what the product unlocks (docs/revenuecat-compatibility.md).
    identifier: (e.entitlement as string | null) ?? DEFAULT_ENTITLEMENT,
    expires_at: iso(e.expires_at),
    grace_until: iso(e.grace_until),
    updated_at: iso(e.updated_at),
  }));
  const view = {
    object: 'subscriber' as const,
    app_user_id: appUserId,
    mode: actor.mode,
    is_premium: isPremium(entitlements),
    entitlements,
    cache_ttl_seconds: cacheTtlSeconds(subs),
  };
  return {
    view,
    ids: ents.map((e: Row) => String(e.id)),
    customerIds,
    signerKid: first[0]?.kid as string | undefined,
  };
}
