import { z } from 'zod';
import { WEBHOOK_DELIVERY_STATUSES } from '../../domain/events';
import { auditPage } from '../../db/audit';
import { deliveryPage } from '../../db/webhook-deliveries';
import { defineOperation } from '../types';
import { auditRow, filter, mode, pageOf, paging, provider, webhookRow } from '../schemas';
import { serializeAuditEntry, serializeWebhookDelivery } from '../serializers';

export const listWebhooks = defineOperation({
  name: 'webhooks.list',
  summary: 'Inbound provider webhook deliveries (payloads stored redacted); status=failed lists dropped ones with the reason',
  scope: 'webhooks:read',
  write: false,
  input: z.object({
    ...paging,
    provider: provider.optional(),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
    event_type: filter.optional(),
    mode: mode.optional(),
  }).strict(),
  output: pageOf(webhookRow),
  rest: { method: 'GET', path: '/webhooks' },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      const page = await deliveryPage(trx, { provider: input.provider, status: input.status, event_type: input.event_type, mode: input.mode }, input);
      return { ...page, data: page.data.map(serializeWebhookDelivery) };
    });
  },
});

export const listAudit = defineOperation({
  name: 'audit.list',
  summary: 'The audit trail; actions through this API carry actor_type api_key and the key id',
  scope: 'audit:read',
  write: false,
  input: z.object({ ...paging, action: filter.optional(), actor_type: filter.optional() }).strict(),
  output: pageOf(auditRow),
  rest: { method: 'GET', path: '/audit' },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      const page = await auditPage(trx, { action: input.action, actor_type: input.actor_type }, input);
      return { ...page, data: page.data.map(serializeAuditEntry) };
    });
  },
});
