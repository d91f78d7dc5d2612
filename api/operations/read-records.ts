import { z } from 'zod';
import { WEBHOOK_DELIVERY_STATUSES } from '../../domain/events';
import { defineOperation } from './types';
import { auditRow, filter, mode, pageOf, paging, provider, webhookRow } from './schemas';
import { paginate, whereGiven } from './paging';
import * as s from './serializers';

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
  tool: { name: 'billing_webhooks', description: 'Inbound webhook deliveries (filters: provider, status, event_type, mode; paged).' },
  async handler(ctx, input) {
    return ctx.tx((trx) =>
      paginate(
        whereGiven(trx('webhook_deliveries'), 'webhook_deliveries', { provider: input.provider, status: input.status, event_type: input.event_type, mode: input.mode }),
        { ...input, table: 'webhook_deliveries' },
        s.webhookDelivery,
      ),
    );
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
  tool: { name: 'billing_audit', description: 'Audit trail (filters: action, actor_type; paged).' },
  async handler(ctx, input) {
    return ctx.tx((trx) =>
      paginate(whereGiven(trx('audit_entries'), 'audit_entries', { action: input.action, actor_type: input.actor_type }), { ...input, table: 'audit_entries' }, s.auditEntry),
    );
  },
});
