import { heartbeat, sleep } from '@temporalio/activity';
import { withTenant } from '../db/tenant-tx';
import { dueHeads, endpointToDrain, failPendingDeliveries, holdDrainLease, recordAttemptOutcome, releaseDrainLease, type AttemptOutcome, type DueHead } from '../db/outbound-drain';
import { signingSecrets, updateEndpoint } from '../db/outbound-endpoints';
import { afterFailedAttempt, DRAIN_BUDGET_MS, type OutboundRetryPolicy } from '../domain/outbound-retry';
import type { ActivityDeps } from './deps';
import { postSigned } from './outbound-http';

/** Heads attempted side by side in one round (one endpoint's receiver sees at most this many at once). */
export const DRAIN_CONCURRENCY = 8;
/** After its last attempt a drain keeps looking this long, every POLL_MS, before it lets go. */
const LINGER_MS = 3_000;
const POLL_MS = 200;
/** How long a lease says "I am looking"; renewed at half-life, so it outlives a poll by far. */
const LEASE_MS = 3_000;

export interface DrainResult {
  /** The endpoint no longer exists: nothing more to do. */
  gone: boolean;
  attempted: number;
  /** Deliveries are due now (the budget ran out first): drain again at once. */
  more: boolean;
  /** Milliseconds until the earliest retry; null when nothing waits. */
  nextDueInMs: number | null;
}

/**
 * The side of outbound webhooks that touches the network: one endpoint's drain. Rounds of up
 * to DRAIN_CONCURRENCY due heads (the oldest pending delivery of each subscriber), posted side
 * by side and signed with the endpoint's secrets (decrypted here, never passed through a
 * workflow). Each attempt is recorded with its outcome: delivered, due again after the back-off
 * (domain/outbound-retry.ts), or failed. A delivery whose window is over fails and disables the
 * endpoint, saying why; a disabled endpoint's waiting deliveries fail saying so; a refused
 * address is not retried. Everything is read in the tenant's transaction (RLS: another
 * tenant's endpoint is not found).
 */
export function createOutboundActivities({ db, config, vault }: ActivityDeps) {
  /** One POST and what follows from it; recorded by the caller with the rest of its round. */
  async function attempt(tenantId: string, policy: OutboundRetryPolicy, url: string, secrets: string[], head: DueHead): Promise<AttemptOutcome> {
    const result = await postSigned({
      url, msgId: head.event_id, body: JSON.stringify(head.body), secrets,
      timeoutMs: policy.attemptTimeoutMs, allowPrivate: config.outboundWebhooks.allowPrivateAddresses,
    });
    const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const error = succeeded ? null : (result.error ?? `HTTP ${result.statusCode}`);
    const attempts = head.attempts + 1;
    const now = Date.now();
    const outcome: AttemptOutcome = {
      tenantId, deliveryId: head.id, attempt: attempts, statusCode: result.statusCode, latencyMs: result.latencyMs,
      responseExcerpt: result.excerpt, error, succeeded,
    };
    if (succeeded) return outcome;
    // A refused address fails its delivery alone; only the window running out disables the endpoint.
    if (result.refused) return { ...outcome, giveUp: error! };
    const next = afterFailedAttempt(policy, attempts, head.window_start_ms ?? now, now);
    return 'giveUp' in next ? { ...outcome, giveUp: `${next.giveUp}; last: ${error}`, windowOver: true } : { ...outcome, retryAt: new Date(next.retryAtMs) };
  }

  return {
    async drainOutbound(input: { tenantId: string; endpointId: string; policy: OutboundRetryPolicy }): Promise<DrainResult> {
      const { tenantId, endpointId, policy } = input;
      const started = Date.now();
      let attempted = 0;
      let lastWork = started;
      let leaseUntil = 0;
      try {
        for (;;) {
          const renew = Date.now() > leaseUntil - LEASE_MS / 2;
          const round = await withTenant(db, tenantId, async (trx) => {
            const endpoint = await endpointToDrain(trx, endpointId);
            if (!endpoint) return { gone: true } as const;
            if (!endpoint.enabled) {
              await failPendingDeliveries(trx, { endpointId }, `endpoint disabled: ${endpoint.disabled_reason ?? 'disabled'}`);
              return { disabled: true } as const;
            }
            if (renew) await holdDrainLease(trx, tenantId, endpointId, LEASE_MS);
            const heads = await dueHeads(trx, endpointId, DRAIN_CONCURRENCY);
            return { endpoint, heads, secrets: heads.due.length ? await signingSecrets(trx, vault, endpointId) : [] };
          });
          if ('gone' in round) return { gone: true, attempted, more: false, nextDueInMs: null };
          if ('disabled' in round) return { gone: false, attempted, more: false, nextDueInMs: null };
          if (renew) leaseUntil = Date.now() + LEASE_MS;
          const { endpoint, heads, secrets } = round;
          const overBudget = Date.now() - started > DRAIN_BUDGET_MS;
          if (heads.due.length) {
            if (overBudget) return { gone: false, attempted, more: true, nextDueInMs: 0 };
            const outcomes = await Promise.all(heads.due.map((h) => attempt(tenantId, policy, endpoint.url, secrets, h)));
            attempted += outcomes.length;
            const over = outcomes.find((o) => o.windowOver);
            await withTenant(db, tenantId, async (trx) => {
              for (const o of outcomes) await recordAttemptOutcome(trx, o);
              if (over) await updateEndpoint(trx, endpointId, { enabled: false, disabledReason: `disabled automatically: ${over.giveUp}` });
            });
            lastWork = Date.now();
            heartbeat({ attempted });
            continue;
          }
          // Nothing due: linger a little (events come in bursts), holding the lease so the
          // dispatcher need not wake us; then let go, and look once more after letting go.
          if (!overBudget && Date.now() - lastWork < LINGER_MS) {
            heartbeat({ attempted });
            await sleep(POLL_MS);
            continue;
          }
          await withTenant(db, tenantId, (trx) => releaseDrainLease(trx, endpointId));
          leaseUntil = 0;
          const last = await withTenant(db, tenantId, (trx) => dueHeads(trx, endpointId, 1));
          if (last.due.length) {
            if (overBudget) return { gone: false, attempted, more: true, nextDueInMs: 0 };
            continue;
          }
          return { gone: false, attempted, more: false, nextDueInMs: last.nextDueInMs };
        }
      } finally {
        // Cancelled or failed while holding the lease: let go so the next delivery wakes a new drain at once.
        if (leaseUntil) await withTenant(db, tenantId, (trx) => releaseDrainLease(trx, endpointId)).catch(() => undefined);
      }
    },
  };
}
