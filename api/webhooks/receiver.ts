import crypto from 'node:crypto';
import type Koa from 'koa';
import { findConnectionByAccount, loadWebhookSecret } from '../../db/connections';
import { withTenant } from '../../db/tenant-tx';
import { isProvider, isStoreProvider, type ProviderId } from '../../domain/providers';
import { redactPayload } from '../../domain/redact';
import type { LifecycleEvent } from '../../domain/subscription';
import { ProviderUnreachableError } from '../../providers/errors';
import type { NormalisedEvent } from '../../providers/types';
import { startStoreNotification } from '../../temporal/workflow-starts';
import { ApiError } from '../errors';
import { within } from '../health';
import { readRawBody } from '../json-body';
import type { Services } from '../services';
import { needsWebhookSecret, peekAccount, RECEIVING } from './accounts';
import { dispatcherFor, type Handover } from './dispatcher';

/**
 * `POST /api/webhooks/<provider>` on the dashboard host. The answer is 200 only once the event
 * is stored and its processing is guaranteed to start. Web providers: the delivery row and its
 * outbox row are committed together, and the outbox dispatcher (./dispatcher.ts) hands the event
 * to its customer's entity workflow, now or, when Temporal is away, as soon as it is back. Stores:
 * the notification's re-read workflow is started before the 200 (Temporal down → 503). Postgres
 * down → 503 (db/unavailable.ts), and the provider retries.
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
    if (isStoreProvider(provider)) {
      const { rows } = await services.db.raw(
        `insert into webhook_deliveries (tenant_id, provider, event_id, event_type, mode, status, payload)
         values (?, ?, ?, ?, ?, 'received', ?::jsonb)
         on conflict (provider, event_id) do update set delivery_count = webhook_deliveries.delivery_count + 1, updated_at = now()
         returning status, tenant_id`,
        [conn.tenant_id, provider, event.id, event.type, event.mode, JSON.stringify(redactPayload(event.payload))],
      );
      const stored = rows[0] as { status: string; tenant_id: string };
      if (stored.tenant_id !== conn.tenant_id) throw new ApiError(400, 'webhook_refused', 'event id already belongs to another account');
      await handOverStoreNotification(services, provider, conn, event, stored.status);
      ctx.status = 200;
      ctx.body = { received: true, id: event.id };
      return;
    }

    // A new event with an effect gets its outbox row in the same statement: once this commits,
    // its processing is guaranteed to start (the dispatcher hands it to Temporal), so 200 is true.
    // A redelivery of one not yet processed is queued again if its row already left the outbox:
    // the workflow ignores event ids it has seen, and nothing depends on the first hand-over.
    const customerKey = event.customer_external_id ?? event.subscription_external_id;
    const effect = !!customerKey && event.kind !== 'other' && event.kind !== 'test';
    const handover: Handover | null = effect
      ? { input: { tenantId: conn.tenant_id, provider, customerKey: customerKey! }, taskQueue: services.config.taskQueue, event: lifecycleEvent(event) }
      : null;
    const { rows } = await services.db.raw(
      `with d as (
         insert into webhook_deliveries (tenant_id, provider, event_id, event_type, mode, status, reason, processed_at, payload)
         values (?, ?, ?, ?, ?, ?, ?, ${effect ? 'null' : 'now()'}, ?::jsonb)
         on conflict (provider, event_id) do update set delivery_count = webhook_deliveries.delivery_count + 1, updated_at = now()
         returning id, tenant_id, status, (xmax = 0) as inserted),
       o as (insert into webhook_outbox (delivery_id, handover) select id, ?::jsonb from d where (inserted or status = 'received') and ?::boolean
             on conflict (delivery_id) do nothing returning id)
       select d.tenant_id, d.inserted, (select count(*) from o)::int as queued from d`,
      [
        conn.tenant_id, provider, event.id, event.type, event.mode, effect ? 'received' : 'processed', effect ? null : 'no effect on subscriptions',
        JSON.stringify(redactPayload(event.payload)), JSON.stringify(handover), effect,
      ],
    );
    const stored = rows[0] as { tenant_id: string; inserted: boolean; queued: number };
    if (stored.tenant_id !== conn.tenant_id) throw new ApiError(400, 'webhook_refused', 'event id already belongs to another account');
    if (stored.queued > 0) dispatcherFor(services).kick();
    ctx.status = 200;
    ctx.body = { received: true, id: event.id };
  };
}

const HANDOVER_TIMEOUT_MS = 3000;

/**
 * A verified store notification is a hint that a purchase changed: its workflow re-reads the
 * purchase from the store's server API and writes what the store says. Started (durably) before
 * the 200 (the web providers' events go through the outbox instead); test notifications and ones
 * naming no purchase change nothing.
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
