import crypto from 'node:crypto';
import type Koa from 'koa';
import { findConnectionByAccount, loadWebhookSecret } from '../../db/connections';
import { withTenant } from '../../db/tenant-tx';
import { isProvider, isStoreProvider, type ProviderId } from '../../domain/providers';
import { redactPayload } from '../../domain/redact';
import type { LifecycleEvent } from '../../domain/subscription';
import { ProviderUnreachableError } from '../../providers/errors';
import type { NormalisedEvent } from '../../providers/types';
import { signalLifecycle, startStoreNotification } from '../../temporal/workflow-starts';
import { ApiError } from '../errors';
import { within } from '../health';
import { readRawBody } from '../json-body';
import type { Services } from '../services';
import { needsWebhookSecret, peekAccount, RECEIVING } from './accounts';

/**
 * `POST /api/webhooks/<provider>` on the dashboard host. The answer is 200 only once the event
 * is stored and its processing is guaranteed to start (its customer's entity workflow has been
 * signalled, durably, by Temporal; for a store, the notification's re-read workflow started);
 * Postgres or Temporal down → 503, and the provider retries.
 *
 * Refusals (unparseable, unknown account, bad or stale signature) are 400 and are kept as
 * `failed` deliveries under a fresh id, so an unverified request can never claim a real event id.
 */
export function webhookReceiver(services: Services): Koa.Middleware {
  return async (ctx, next) => {
    const m = /^\/api\/webhooks\/([^/]+)$/.exec(ctx.path);
    if (!m) return next();
    const provider = m[1];
    if (!isProvider(provider) || !RECEIVING.includes(provider)) throw new ApiError(404, 'not_found', `No webhook receiver for "${provider}".`);
    if (ctx.method !== 'POST') throw new ApiError(405, 'method_not_allowed', 'Webhooks are delivered by POST.', {}, { Allow: 'POST' });
    const raw = await readRawBody(ctx);

    const refuse = async (tenantId: string | null, reason: string, claimedId: string | null) => {
      await services.db('webhook_deliveries').insert({
        tenant_id: tenantId,
        provider,
        event_id: `unverified_${crypto.randomUUID()}`,
        event_type: 'unverified',
        status: 'failed',
        reason,
        payload: JSON.stringify({ claimed_event_id: claimedId, bytes: raw.length }),
      });
      throw new ApiError(400, 'webhook_refused', reason);
    };

    const account = peekAccount(provider, raw);
    if (!account) return refuse(null, 'the body names no connected account (or is not JSON)', null);
    const conn = await findConnectionByAccount(services.db, provider, account);
    if (!conn) return refuse(null, `no active ${provider} connection for account ${account}`, null);
    if (!services.vault || !services.adapters) throw new ApiError(500, 'server_misconfigured', 'Webhook verification is not configured on this process (MASTER_KEY).');
    let event: NormalisedEvent;
    try {
      const secret = needsWebhookSecret(provider) ? await withTenant(services.db, conn.tenant_id, (trx) => loadWebhookSecret(trx, services.vault!, conn.connection_id)) : '';
      event = await services.adapters[provider].verifyWebhook({ headers: ctx.headers, rawBody: raw, secret });
    } catch (err) {
      // The verifier could not reach its keys (Google's OIDC key set): not the sender's fault, so a retry, not a refusal.
      if (err instanceof ProviderUnreachableError) throw new ApiError(503, 'temporarily_unavailable', 'The signature cannot be checked right now; retry.', {}, { 'Retry-After': '5' });
      return refuse(conn.tenant_id, `signature not verified: ${(err as Error).message}`, null);
    }

    // One row per provider event id: a redelivery bumps the counter and changes nothing else.
    const { rows } = await services.db.raw(
      `insert into webhook_deliveries (tenant_id, provider, event_id, event_type, mode, status, payload)
       values (?, ?, ?, ?, ?, 'received', ?::jsonb)
       on conflict (provider, event_id) do update set delivery_count = webhook_deliveries.delivery_count + 1, updated_at = now()
       returning status, tenant_id`,
      [conn.tenant_id, provider, event.id, event.type, event.mode, JSON.stringify(redactPayload(event.payload))],
    );
    const stored = rows[0] as { status: string; tenant_id: string };
    if (stored.tenant_id !== conn.tenant_id) throw new ApiError(400, 'webhook_refused', 'event id already belongs to another account');

    if (isStoreProvider(provider)) {
      await handOverStoreNotification(services, provider, conn, event, stored.status);
      ctx.status = 200;
      ctx.body = { received: true, id: event.id };
      return;
    }

    const customerKey = event.customer_external_id ?? event.subscription_external_id;
    if (stored.status === 'received' && customerKey && event.kind !== 'other' && event.kind !== 'test') {
      if (!services.temporal) throw new ApiError(503, 'temporarily_unavailable', 'Processing is unavailable; retry.');
      try {
        // Bounded: providers want an answer within seconds (Razorpay: 5 s); a slow Temporal is a 503 and a retry.
        const client = services.temporal.client;
        await within(HANDOVER_TIMEOUT_MS, client.withDeadline(Date.now() + HANDOVER_TIMEOUT_MS, () =>
          signalLifecycle(client, services.config.taskQueue, { tenantId: conn.tenant_id, provider, customerKey }, lifecycleEvent(event)),
        ));
      } catch {
        // Stored but not yet handed over: the provider's retry (same event id) hands it over.
        throw new ApiError(503, 'temporarily_unavailable', 'The event is stored but processing could not be started; retry.', {}, { 'Retry-After': '5' });
      }
    } else if (stored.status === 'received') {
      await services.db('webhook_deliveries').where({ provider, event_id: event.id, status: 'received' }).update({ status: 'processed', processed_at: services.db.fn.now(), reason: 'no effect on subscriptions' });
    }
    ctx.status = 200;
    ctx.body = { received: true, id: event.id };
  };
}

const HANDOVER_TIMEOUT_MS = 3000;

/**
 * A verified store notification is a hint that a purchase changed: its workflow re-reads the
 * purchase from the store's server API and writes what the store says. Started (durably) before
 * the 200, as the web providers' events are; test notifications and ones naming no purchase
 * change nothing.
 */
async function handOverStoreNotification(services: Services, provider: 'store_android' | 'store_ios', conn: { tenant_id: string; connection_id: string }, event: NormalisedEvent, status: string) {
  if (status !== 'received') return;
  const purchaseId = event.subscription_external_id;
  if (!purchaseId || event.kind === 'test' || event.kind === 'other') {
    await services.db('webhook_deliveries').where({ provider, event_id: event.id, status: 'received' })
      .update({ status: 'processed', processed_at: services.db.fn.now(), reason: 'no purchase to re-read' });
    return;
  }
  if (!services.temporal) throw new ApiError(503, 'temporarily_unavailable', 'Processing is unavailable; retry.');
  const client = services.temporal.client;
  try {
    await within(HANDOVER_TIMEOUT_MS, client.withDeadline(Date.now() + HANDOVER_TIMEOUT_MS, () =>
      startStoreNotification(client, services.config.taskQueue, {
        tenantId: conn.tenant_id,
        provider,
        connectionId: conn.connection_id,
        // RTDN carries no environment; an App Store notification's is verified.
        mode: provider === 'store_ios' ? event.mode : null,
        eventId: event.id,
        kind: event.kind,
        purchaseId,
      }),
    ));
  } catch {
    throw new ApiError(503, 'temporarily_unavailable', 'The notification is stored but processing could not be started; retry.', {}, { 'Retry-After': '5' });
  }
}


function lifecycleEvent(e: NormalisedEvent): LifecycleEvent {
  return {
    id: e.id,
    kind: e.kind,
    occurred_at: e.occurred_at,
    mode: e.mode,
    subscription_id: e.subscription_external_id ?? null,
    customer_id: e.customer_external_id ?? null,
    email: e.email ?? null,
    app_user_id: e.app_user_id ?? null,
    sku: e.sku ?? null,
    trial_start: e.trial_start ?? null,
    trial_end: e.trial_end ?? null,
    current_period_end: e.current_period_end ?? null,
  };
}
