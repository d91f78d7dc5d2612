import type { Knex } from 'knex';
import { signingKeys } from '../../db/signing-key-service';
import { ACTIVE_SIGNER } from '../../db/signing-keys';
import { ENTITLEMENT_TOKEN_TYP, entitlementTokenClaims } from '../../domain/entitlement-token';
import type { Services } from '../../operations/services';
import type { AppActor } from './auth';
import { subscriberRead } from './subscriber';

/**
 * `GET /v1/sdk/subscribers/{id}/token` (docs/entitlement-tokens.md): the premium check's answer
 * as a signed token, `{token, expires_at}`. Built from the premium check's own read, so the two
 * never disagree; signed with the deployment's active key (db/signing-key-service.ts), which is
 * read with that state in its first round trip. Whether it is premium and the customer's ids ride
 * along for the `wait_for=premium` hold and are not sent.
 */
export async function entitlementTokenRead(
  services: Services,
  db: Knex,
  actor: AppActor,
  appUserId: string,
  held = false,
) {
  const { view, ids, customerIds, signerKid } = await subscriberRead(db, actor, appUserId, {
    held,
    signer: ACTIVE_SIGNER,
  });
  const claims = entitlementTokenClaims({
    issuer: services.config.publicApiUrl,
    tenantId: actor.tenantId,
    mode: actor.mode,
    appUserId,
    entitlements: view.entitlements.map((e, i) => ({
      id: ids[i],
      identifier: e.identifier,
      state: e.state,
      expires_at: e.expires_at,
      grace_until: e.grace_until,
    })),
    now: new Date(),
  });
  const token = await signingKeys(services.db, services.vault).signJwsAs(signerKid, claims, ENTITLEMENT_TOKEN_TYP);
  return {
    answer: { token, expires_at: new Date(claims.exp * 1000).toISOString() },
    premium: view.is_premium,
    customerIds,
  };
}
