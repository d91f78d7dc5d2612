import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import { withTenant } from '../db/tenant-tx';
import { deliveryToAttempt, failOutboundDelivery, lastAttemptError, recordAttempt } from '../db/outbound-events';
import { signingSecrets, updateEndpoint } from '../db/outbound-endpoints';
import type { ActivityDeps } from './deps';
import { postSigned } from './outbound-http';

export type OutboundOutcome = 'succeeded' | 'already_delivered' | 'gone' | 'endpoint_disabled';

/**
 * The side of outbound webhooks that touches the network. One call is one HTTP attempt: it
 * reads the delivery in the tenant's transaction (RLS: a delivery id of another tenant is not
 * found), signs with the endpoint's secrets (decrypted here, never passed through a workflow),
 * posts, records the attempt, and throws on anything but a 2xx so Temporal retries it with the
 * workflow's back-off. A refused address is not retried.
 */
export function createOutboundActivities({ db, config, vault }: ActivityDeps) {
  return {
    async deliverOutbound(input: { tenantId: string; deliveryId: string }): Promise<OutboundOutcome> {
      const { tenantId, deliveryId } = input;
      const d = await withTenant(db, tenantId, (trx) => deliveryToAttempt(trx, deliveryId));
      if (!d) return 'gone';
      if (d.status === 'succeeded') return 'already_delivered';
      if (!d.enabled) {
        await withTenant(db, tenantId, (trx) => failOutboundDelivery(trx, deliveryId, `endpoint disabled: ${d.disabled_reason ?? 'disabled'}`));
        return 'endpoint_disabled';
      }
      const secrets = await withTenant(db, tenantId, (trx) => signingSecrets(trx, vault, d.endpoint_id));
      const r = await postSigned({
        url: d.url, msgId: d.event_id, body: JSON.stringify(d.body), secrets,
        timeoutMs: config.outboundWebhooks.attemptTimeoutMs, allowPrivate: config.outboundWebhooks.allowPrivateAddresses,
      });
      const ok = r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;
      const error = ok ? null : (r.error ?? `HTTP ${r.statusCode}`);
      await withTenant(db, tenantId, (trx) => recordAttempt(trx, {
        tenantId, deliveryId, attempt: activityInfo().attempt, statusCode: r.statusCode, latencyMs: r.latencyMs, responseExcerpt: r.excerpt, error, succeeded: ok,
      }));
      if (ok) return 'succeeded';
      if (r.refused) throw ApplicationFailure.nonRetryable(error!, 'AddressRefused');
      throw ApplicationFailure.retryable(error!, 'DeliveryFailed');
    },

    /**
     * The delivery gave up: `failed` with the reason. When it was the retry window that ran out,
     * the endpoint is disabled too, saying why (the dashboard shows it); re-enabling it and
     * replaying the failed deliveries resumes.
     */
    async giveUpOutbound(input: { tenantId: string; deliveryId: string; endpointId: string; reason: string; disableEndpoint: boolean; lastFailure?: string }): Promise<void> {
      await withTenant(db, input.tenantId, async (trx) => {
        let reason = input.reason;
        if (input.disableEndpoint) {
          // The window can close while an attempt is still under way; Temporal then reports its own
          // timeout. The receiver's last recorded answer says more to the person reading it.
          const last = (await lastAttemptError(trx, input.deliveryId)) ?? input.lastFailure;
          if (last && !reason.includes('; last: ')) reason = `${reason}; last: ${last}`;
        }
        await failOutboundDelivery(trx, input.deliveryId, reason);
        if (input.disableEndpoint) await updateEndpoint(trx, input.endpointId, { enabled: false, disabledReason: `disabled automatically: ${reason}` });
      });
    },
  };
}
