import { z } from 'zod';
import { iso } from '../paging';
import type { Row } from '../../db/row';
import { subscriptionPage } from '../../db/subscriptions';
import { SUBSCRIPTION_STATUSES } from '../../domain/subscription';
import { isoReq } from '../paging';
import { id, mode, provider, timestamp, timestampOrNull, filter, pageOf, paging } from '../schemas';
import { defineOperation } from '../types';

export const subscriptionRow = z.object({
  id: id(),
  object: z.literal('subscription'),
  app_user_id: z.string().nullable(),
  email: z.string().nullable(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  provider,
  mode,
  product_id: id().nullable(),
  sku: z.string().nullable(),
  external_id: z.string(),
  trialStartedAt: timestampOrNull,
  trialEndedAt: timestampOrNull,
  current_period_end: timestampOrNull,
  canceled_at: timestampOrNull,
  created_at: timestamp,
  updated_at: timestamp,
});

export function serializeSubscription(r: Row) {
  return {
    id: r.id,
    object: 'subscription' as const,
    app_user_id: r.app_user_id ?? null,
    email: r.email ?? null,
    status: r.status,
    provider: r.provider,
    mode: r.mode,
    product_id: r.product_id ?? null,
    sku: r.sku ?? null,
    external_id: r.external_id,
    trialStartedAt: iso(r.trial_started_at),
    trialEndedAt: iso(r.trial_ended_at),
    current_period_end: iso(r.current_period_end),
    canceled_at: iso(r.canceled_at),
    created_at: isoReq(r.created_at),
    updated_at: isoReq(r.updated_at),
  };
}

export const listSubscribers = defineOperation({
  name: 'subscribers.list',
  summary: 'Subscription records (what providers bill); filter by mode so a live question never gets a test row',
  scope: 'subscribers:read',
  write: false,
  input: z
    .object({
      ...paging,
      email: filter.optional(),
      status: z.enum(SUBSCRIPTION_STATUSES).optional(),
      provider: provider.optional(),
      mode: mode.optional(),
    })
    .strict(),
  output: pageOf(subscriptionRow),
  rest: { method: 'GET', path: '/subscribers' },
  pages: [{ page: '/subscribers', gates: ['open'] }],
  tool: {
    name: 'billing_subscribers',
    title: 'Subscribers',
    description:
      'Subscription records (filters: email, status, provider, mode; paged). Pass mode=live for live questions.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.read(async (reader) => {
      const page = await subscriptionPage(
        reader,
        { email: input.email, status: input.status, provider: input.provider, mode: input.mode },
        input,
      );
      return { ...page, data: page.data.map(serializeSubscription) };
    });
  },
});
