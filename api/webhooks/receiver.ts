import type Koa from 'koa';
import { recordRefusal, storeDelivery } from '../../db/webhook-deliveries';
import { eventIdProblem } from '../../domain/events';
import { grantsProvisional, stopsProvisional } from '../../domain/provisional';
import type { ProvisionalAtReceipt } from '../../db/provisional';
import { notifyAfterCommit } from '../../db/entitlement-notify';
import type { Config } from '../../runtime/config';
import { isProvider, isStoreProvider, type ProviderId } from '../../domain/providers';
import { redactPayload } from '../../domain/redact';
import type { LifecycleEvent } from '../../domain/subscription';
import { ProviderUnreachableError } from '../../providers/errors';
import { sealPurchase } from '../../providers/purchase-ref';
import type { NormalisedEvent } from '../../providers/types';
import type { Vault } from '../../vault/vault';
import { ApiError } from '../../operations/errors';
import { readRawBody } from '../json-body';
import type { Services } from '../../operations/services';
import { peekAccount, RECEIVING } from './accounts';
import { routeCacheFor } from './route-cache';
import { withSellerSku } from './seller-sku';
import { kickDispatcher } from './dispatcher';
import type { Handover } from './handover';
import { jsonNestingDepth, MAX_WEBHOOK_DEPTH } from './nesting';
import { receiptToPremium, secondsSince, webhookReceipts, webhookRefusals } from '../../runtime/metrics';
import { currentTraceparent, inSpan } from '../../runtime/tracing';
import { receiptOutcome } from '../metrics';

const MAX_ACCOUNT_REF = 255;

/** Why a receipt was refused, as `billing_webhook_refusals_total` counts it. */
type RefusalKind = 'too_deep' | 'no_account' | 'unclaimed_account' | 'signature' | 'invalid_event';

/**
 * One answer for every request we cannot attribute to a connected account: a stranger learns nothing about which
 * accounts exist.
 */
const unverified = () =>
  new ApiError(400, 'webhook_refused', 'The request could not be verified as an event from a connected account.');

/**
 * `POST /api/webhooks/<provider>`, on the dashboard host, the one path for all five providers:
 * verify, then one statement commits the delivery row and its outbox row together, and the
 * answer is 200. From then on the event's processing is guaranteed to start: the outbox
 * dispatcher (./dispatcher.ts, started with the process) hands it to Temporal now, or when
 * Temporal is back. Postgres down → 503 (db/unavailable.ts), and the provider retries.
 *
 * Deliveries are unique per (tenant, provider, event id): tenants choose their own ids under
 * their own signatures, so one tenant's id never shadows another's. Refusals store no sender
 * content and echo nothing (recordRefusal in db/webhook-deliveries.ts caps what they keep). A
 * refusal names a tenant only once the body's account routes to one; an account no connection
 * has proven (docs/providers.md, "Proving an account") is refused under no tenant, like an
 * unknown one, and counted (`billing_webhook_refusals_total{reason="unclaimed_account"}`).
 */
export function webhookReceiver(services: Services): Koa.Middleware {
  return async (ctx, next) => {
    const m = /^\/api\/webhooks\/([^/]+)$/.exec(ctx.path);
    if (!m) return next();
    const provider = m[1];
    if (!isProvider(provider) || !RECEIVING.includes(provider))
      throw new ApiError(404, 'not_found', `No webhook receiver for "${provider}".`);
    if (ctx.method !== 'POST')
      throw new ApiError(405, 'method_not_allowed', 'Webhooks are delivered by POST.', {}, { Allow: 'POST' });
    // The trace starts here (when tracing is on) and continues through the outbox row's traceparent.
    await inSpan('webhook.receive', { 'billing.provider': provider }, async (span) => {
      try {
        const outcome = await receive(services, ctx, provider);
        span.setAttribute('billing.outcome', outcome);
        webhookReceipts.inc({ provider, outcome });
      } catch (err) {
        webhookReceipts.inc({ provider, outcome: receiptOutcome(err) });
        throw err;
      }
    });
  };
}

/** Verify and store one delivery; says what became of it. */
async function receive(
  services: Services,
  ctx: Koa.Context,
  provider: ProviderId,
): Promise<'queued' | 'duplicate' | 'no_effect'> {
  // The receipt: the request's arrival, so the lag counts reading, verifying and storing it.
  const received = process.hrtime.bigint();
  const raw = await readRawBody(ctx);

  // `kind` is the metric's reason; `verified`: the tenant's provider signed it (docs/operations.md).
  const refuse = async (
    tenantId: string | null,
    reason: string,
    kind: RefusalKind,
    error: ApiError = unverified(),
  ): Promise<never> => {
    const kept = await recordRefusal(services.db, {
      tenantId,
      provider,
      reason,
      bytes: raw.length,
      verified: kind === 'invalid_event',
    });
    webhookRefusals.inc({ provider, reason: kind, kept: kept ? 'yes' : 'no' });
    throw error;
  };

  if (jsonNestingDepth(raw) > MAX_WEBHOOK_DEPTH) {
    return refuse(
      null,
      `payload nests deeper than ${MAX_WEBHOOK_DEPTH} levels`,
      'too_deep',
      new ApiError(400, 'webhook_refused', `The payload nests deeper than ${MAX_WEBHOOK_DEPTH} levels.`),
    );
  }
  const account = peekAccount(provider, raw);
  if (!account || account.length > MAX_ACCOUNT_REF)
    return refuse(null, 'the body names no connected account', 'no_account');
  if (!services.vault || !services.adapters)
    throw new ApiError(
      500,
      'server_misconfigured',
      'Webhook verification is not configured on this process (MASTER_KEY).',
    );
  const routes = routeCacheFor(services);
  const adapter = services.adapters[provider];
  const verify = async (fresh: boolean) => {
    const route = await routes.get(provider, account, fresh);
    if (!route) return { route, event: null, problem: 'the account is not connected' };
    if (route.secret === null) return { route, event: null, problem: `signature not verified: ${route.secretProblem}` };
    try {
      return {
        route,
        event: await adapter.verifyWebhook({ headers: ctx.headers, rawBody: raw, secret: route.secret }),
        problem: null,
      };
    } catch (err) {
      // The verifier could not reach its keys (Google's OIDC key set): not the sender's fault, so a retry, not a
      // refusal.
      if (err instanceof ProviderUnreachableError)
        throw new ApiError(
          503,
          'temporarily_unavailable',
          'The signature cannot be checked right now; retry.',
          {},
          { 'Retry-After': '5' },
        );
      return { route, event: null, problem: `signature not verified: ${(err as Error).message}` };
    }
  };
  // A cached secret that fails is checked once more against a fresh read: the tenant may have just rotated it.
  let checked = await verify(false);
  if (!checked.event && checked.route?.cached) checked = await verify(true);
  const { route: conn, event: verified } = checked;
  if (!conn) return refuse(null, checked.problem!, 'unclaimed_account');
  if (!verified) return refuse(conn.tenant_id, checked.problem!, 'signature');
  // The SKU is the seller's: an event naming its plan by id has it read from the plan (./seller-sku.ts).
  const event = await withSellerSku(services, provider, conn, account, verified);

  // Verified: the sender is the tenant's provider, so a refusal may now say what is wrong.
  const store = isStoreProvider(provider);
  const problem = eventIdProblem(
    { id: event.id, customer_id: event.customer_external_id, subscription_id: event.subscription_external_id },
    store,
  );
  if (problem)
    return refuse(
      conn.tenant_id,
      problem.detail,
      'invalid_event',
      new ApiError(400, 'invalid_event', problem.detail, { param: problem.param }),
    );

  const handover = handoverFor(services.vault, provider, conn, event, currentTraceparent());
  // A web event that grants or stops provisional access does so in the statement below (docs/provisional-access.md).
  const provisional =
    handover?.kind === 'lifecycle' ? provisionalFor(event, handover.customerKey, services.config) : null;
  const stored = await storeDelivery(services.db, {
    tenantId: conn.tenant_id,
    provider,
    eventId: event.id,
    eventType: event.type,
    mode: event.mode,
    payload: redactPayload(event.payload),
    buyerEmail: handover ? (event.email ?? null) : null,
    handover,
    taskQueue: services.config.taskQueue,
    noEffectReason: handover ? null : store ? 'no purchase to re-read' : 'no effect on subscriptions',
    provisional,
  });
  // Premium visible from the commit just done: the receipt → premium lag's provisional source.
  if (provisional && !provisional.stop && stored.provisional > 0) {
    receiptToPremium.observe({ provider, source: 'provisional' }, secondsSince(received));
    // The app user's waiters are woken by a statement of its own, after the commit: a NOTIFY in the writing
    // transaction would hold Postgres's single notify lock through its WAL flush and serialize every receipt;
    // alone it writes no WAL. Lost (a crash between the two), a waiter still re-reads at its timeout. Only a
    // first grant changes the answer: the checkout's later events renew it, and nobody waits for premium then.
    if (stored.firstGrant) await notifyAfterCommit(services.db, conn.tenant_id, provisional.appUserId!);
  }
  if (stored.queued) kickDispatcher(services);
  ctx.status = 200;
  ctx.body = { received: true, id: event.id };
  return stored.queued ? 'queued' : stored.inserted ? 'no_effect' : 'duplicate';
}

/** What processing the event needs, or null when it changes nothing (test pings, types we do not act on). */
function handoverFor(
  vault: Vault,
  provider: ProviderId,
  conn: { tenant_id: string; connection_id: string },
  e: NormalisedEvent,
  trace: string | undefined,
): Handover | null {
  if (e.kind === 'other' || e.kind === 'test') return null;
  if (provider === 'store_android' || provider === 'store_ios') {
    // A verified store notification is a hint that a purchase changed: its workflow re-reads the purchase.
    if (!e.subscription_external_id) return null;
    return {
      kind: 'store',
      ...(trace ? { trace } : {}),
      notification: {
        tenantId: conn.tenant_id,
        provider,
        connectionId: conn.connection_id,
        // RTDN carries no environment; an App Store notification's is verified.
        mode: provider === 'store_ios' ? e.mode : null,
        eventId: e.id,
        kind: e.kind,
        purchase: sealPurchase(vault, conn.tenant_id, provider, e.subscription_external_id),
      },
    };
  }
  const customerKey = e.customer_external_id ?? e.subscription_external_id;
  if (!customerKey) return null;
  return {
    kind: 'lifecycle',
    tenantId: conn.tenant_id,
    provider,
    customerKey,
    event: lifecycleEvent(e),
    ...(trace ? { trace } : {}),
  };
}

/**
 * Provisional access for a verified web event (domain/provisional.ts): a grant for an event that
 * moves its subscription to active and names an app user and a SKU (the product and the held state
 * are checked inside the statement), a stop for an ending; null for every other event.
 */
function provisionalFor(
  e: NormalisedEvent,
  customerKey: string,
  config: Pick<Config, 'provisionalAccessSeconds'>,
): ProvisionalAtReceipt | null {
  const stop = stopsProvisional(e.kind);
  if (!stop && !(grantsProvisional(e.kind) && e.app_user_id && e.sku)) return null;
  return {
    stop,
    customerKey,
    subscriptionId: e.subscription_external_id ?? null,
    appUserId: stop ? null : (e.app_user_id ?? null),
    sku: stop ? null : (e.sku ?? null),
    eventAt: e.occurred_at,
    isSandbox: e.mode === 'test',
    seconds: config.provisionalAccessSeconds,
  };
}

/** The event as the lifecycle rules need it: ids, kinds and times, never the buyer's email. */
function lifecycleEvent(e: NormalisedEvent): LifecycleEvent {
  return {
    id: e.id,
    kind: e.kind,
    occurred_at: e.occurred_at,
    mode: e.mode,
    subscription_id: e.subscription_external_id ?? null,
    customer_id: e.customer_external_id ?? null,
    has_email: !!e.email,
    app_user_id: e.app_user_id ?? null,
    sku: e.sku ?? null,
    trial_start: e.trial_start ?? null,
    trial_end: e.trial_end ?? null,
    current_period_end: e.current_period_end ?? null,
    // Only events that speak about a cancellation carry these (domain/subscription.ts).
    ...(e.ended_at !== undefined ? { ended_at: e.ended_at } : {}),
    ...(e.cancel_at !== undefined ? { cancel_at: e.cancel_at } : {}),
    ...(e.country ? { country: e.country } : {}),
  };
}
