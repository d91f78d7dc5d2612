import type Router from '@koa/router';
import { z } from 'zod';
import { listConnectionsSafe, type SafeConnection } from '../../db/connections';
import { connectionForApp } from '../../db/app-providers';
import { isKnownMiss, rememberMiss } from '../../db/store-purchase-misses';
import { withTenant } from '../../db/tenant-tx';
import { speakingConnection } from '../../domain/connection-choice';
import { sealPurchase } from '../../providers/purchase-ref';
import { registerStorePurchase } from '../../temporal/workflow-starts';
import { assertNoNulBytes } from '../../operations/input-rules';
import { ApiError, invalidRequest } from '../../operations/errors';
import { callWithin } from '../../temporal/client';
import { readJsonObject } from '../json-body';
import type { Services } from '../../operations/services';
import { admitPublishable, type AppActor } from './auth';
import { clientRateLimited, registrationBuckets, takeClientTokens } from './limits';
import { MISS_TTL_SECONDS, missKey } from './purchase-misses';
import { subscriberView } from './subscriber';
import { transfersCounter } from '../../runtime/metrics';

const appUserId = z.string().min(1, 'must be 1–200 characters').max(200, 'must be 1–200 characters');
const storeId = z.string().trim().min(1, 'is required').max(200, 'is too long');

/**
 * What the SDK sends after a store purchase. Android also sends `plan_id` and `order_id`: both
 * are accepted and not trusted (the store's own answer is what counts).
 */
export const storePurchaseBody = z.discriminatedUnion('provider', [
  z.object({
    app_user_id: appUserId,
    provider: z.literal('store_android'),
    product_id: storeId,
    purchase_token: z.string().min(1, 'is required').max(4096, 'is too long'),
    plan_id: z.string().max(200).optional(),
    order_id: z.string().max(200).optional(),
  }),
  z.object({
    app_user_id: appUserId,
    provider: z.literal('store_ios'),
    signed_transaction: z
      .string()
      .max(65_536, 'is too long')
      .regex(/^[\w-]+\.[\w-]+\.[\w-]+$/, 'must be the compact JWS StoreKit gives the app (jwsRepresentation)'),
  }),
]);

export const purchaseNotFound = () =>
  new ApiError(
    404,
    'purchase_not_found',
    'The store does not know this purchase (answered a moment ago); check the token, or retry in a few minutes if the purchase was just made.',
  );

/** How long the client is kept waiting; the workflow carries on, and a retry joins it. */
export const WAIT_MS = 25_000;

function firstIssue(error: z.ZodError): ApiError {
  const issue = error.issues[0];
  const param = issue.path.length ? issue.path.join('.') : undefined;
  const what =
    issue.code === 'invalid_union' && param === 'provider'
      ? 'provider must be one of store_android, store_ios'
      : `${param ?? 'body'} ${issue.code === 'invalid_type' && /undefined/.test(issue.message) ? 'is required' : issue.message}`;
  return invalidRequest(what, param);
}

async function storeConnection(
  services: Services,
  tenantId: string,
  appId: string,
  provider: 'store_android' | 'store_ios',
): Promise<SafeConnection | undefined> {
  return withTenant(
    services.db,
    tenantId,
    async (trx) =>
      (await connectionForApp(trx, appId, provider)) ??
      speakingConnection(await listConnectionsSafe(trx, { provider })),
  );
}

/**
 * POST /v1/sdk/store-purchases: register a store purchase for an app user and answer the app
 * user's entitlements (the shape of GET /v1/sdk/subscribers/{id}) once they are reconciled.
 * The registration itself is a workflow (workflows/store-purchase.ts); this route validates,
 * picks the app's store connection and waits for the workflow's verdict.
 *
 * Unknown tokens are cheap to refuse: a token the store answered 404 for is refused from a
 * short per-tenant cache, and registrations have buckets of their own, spent only when a
 * workflow is about to start: per app user, per client address (IPv6: per /64) and per tenant
 * (api/sdk/limits.ts), so a loop of made-up tokens costs a few store calls, not one per
 * request, and fresh app user ids from one address are no fresh allowance.
 */
export function registerStorePurchaseRoute(router: Router, services: Services): void {
  router.post('/store-purchases', async (ctx) => {
    const { actor, rateHeaders } = await admitPublishable(services.db, ctx.req.rawHeaders, { address: ctx.ip });
    ctx.state.tenantId = actor.tenantId;
    ctx.set(rateHeaders);
    const raw = await readJsonObject(ctx);
    assertNoNulBytes(raw);
    const parsed = storePurchaseBody.safeParse(raw);
    if (!parsed.success) throw firstIssue(parsed.error);
    const body = parsed.data;

    const outcome = await registerStorePurchaseFor(services, actor, body, ctx.ip);
    if (outcome.kind === 'transfer_pending') {
      // Under the review policy the holder keeps access until someone decides (docs/transfers.md).
      ctx.status = 202;
      ctx.body = { transfer: outcome.transfer };
      return;
    }
    ctx.body = await subscriberView(services.db, actor, body.app_user_id);
  });
}

export type StorePurchaseBody = z.infer<typeof storePurchaseBody>;

/**
 * The app's store connection, when it can register purchases for this key: active, with a
 * credential of the key's mode, and this process able to start the workflow. Otherwise the
 * refusal that says what to fix (400 naming `provider`), or 503 while the workflow engine is away.
 */
export async function readyStoreConnection(
  services: Services,
  actor: AppActor,
  provider: 'store_android' | 'store_ios',
): Promise<SafeConnection> {
  const conn = await storeConnection(services, actor.tenantId, actor.appId, provider);
  if (!conn || !conn.is_active)
    throw invalidRequest(
      `This app has no active ${provider} connection; connect the store in the dashboard (Providers).`,
      'provider',
    );
  if (!(actor.mode === 'test' ? conn.has_test_credential : conn.has_live_credential)) {
    throw invalidRequest(
      `The ${provider} connection has no ${actor.mode} credential to read purchases with; enter it in the dashboard (Providers).`,
      'provider',
    );
  }
  if (!services.temporal)
    throw new ApiError(
      503,
      'temporarily_unavailable',
      'Purchase registration is unavailable; retry.',
      {},
      { 'Retry-After': '5' },
    );
  if (!services.vault)
    throw new ApiError(
      500,
      'server_misconfigured',
      'Purchase registration is not configured on this process (MASTER_KEY).',
    );
  return conn;
}

/**
 * What a registration starts from: the SDK's body, or (RevenueCat's receipts) the App Store
 * transaction id a StoreKit 1 app receipt names, read from Apple like any other.
 */
export type StoreRegistration =
  StorePurchaseBody | { provider: 'store_ios'; app_user_id: string; transaction_id: string };

/** What a registration came to: the caller is entitled (as the store says), or a transfer waits for review. */
export type RegistrationOutcome =
  | { kind: 'entitled'; transfer?: { id: string; status: 'completed'; undo_until: string | null } }
  | { kind: 'transfer_pending'; transfer: { id: string; status: 'pending' } };

/**
 * Register a store purchase for an app user: the one path every client surface takes
 * (`POST /v1/sdk/store-purchases`, and the RevenueCat-compatible receipts), so a purchase another
 * app user holds gets the tenant's restore policy wherever it is registered (docs/transfers.md;
 * the decision itself is the claim's: activities/store-purchases.ts `applyRestorePolicy`).
 * Throws the refusals as ApiError (404 purchase_not_found, 409 purchase_token_reused, …).
 */
export async function registerStorePurchaseFor(
  services: Services,
  actor: AppActor,
  body: StoreRegistration,
  clientAddress: string,
): Promise<RegistrationOutcome> {
  const conn = await readyStoreConnection(services, actor, body.provider);
  const vault = services.vault!;
  const missHash = missKey(conn.id, actor.mode, body);
  if (await isKnownMiss(services.db, actor.tenantId, body.provider, missHash)) throw purchaseNotFound();
  const lane = await takeClientTokens(
    services.db,
    actor.tenantId,
    registrationBuckets(body.app_user_id, clientAddress),
  );
  if (!lane.allowed) throw clientRateLimited(lane);

  const client = services.temporal!.client;
  let result;
  try {
    result = await callWithin(client, WAIT_MS, () =>
      registerStorePurchase(client, services.config.taskQueue, {
        tenantId: actor.tenantId,
        provider: body.provider,
        connectionId: conn.id,
        mode: actor.mode,
        appUserId: body.app_user_id,
        // The token enters the workflow hashed and sealed, never in clear (providers/purchase-ref.ts).
        ...(body.provider === 'store_android'
          ? {
              purchase: sealPurchase(vault, actor.tenantId, 'store_android', body.purchase_token),
              storeProductId: body.product_id,
            }
          : 'transaction_id' in body
            ? { transactionId: body.transaction_id }
            : { signedTransaction: body.signed_transaction }),
      }),
    );
  } catch {
    // Still running or not started: the same request again joins or starts the same workflow.
    throw new ApiError(
      503,
      'temporarily_unavailable',
      'The purchase is being registered; retry shortly.',
      {},
      { 'Retry-After': '2' },
    );
  }
  // The policy refused a restore before any claim (the store names another buyer); the claim's own refusals are
  // counted by the worker.
  if (!result.ok && result.restore_refused)
    transfersCounter.inc({ policy: result.restore_refused, outcome: 'refused' });
  if (!result.ok && result.error === 'purchase_not_found')
    await rememberMiss(services.db, actor.tenantId, body.provider, missHash, MISS_TTL_SECONDS);
  if (!result.ok)
    throw new ApiError(
      result.status,
      result.error,
      result.detail,
      {},
      result.status === 503 ? { 'Retry-After': '5' } : {},
    );
  // Joined a run another app user started for the same token: theirs.
  if (result.app_user_id !== body.app_user_id)
    throw new ApiError(409, 'purchase_token_reused', 'This purchase is already registered to another app user.');
  if (result.transfer?.status === 'pending')
    return { kind: 'transfer_pending', transfer: { id: result.transfer.id, status: 'pending' } };
  return result.transfer
    ? {
        kind: 'entitled',
        transfer: { id: result.transfer.id, status: 'completed', undo_until: result.transfer.undo_until },
      }
    : { kind: 'entitled' };
}
