import { z } from 'zod';
import { ReplayQuotaExceeded } from '../../db/outbound-events';
import type { Row } from '../../db/row';
import { UUID_RE } from '../../domain/ids';
import { OUTBOUND_DELIVERY_STATUSES } from '../../domain/outbound-events';
import { REPLAY_PENDING_CAP } from '../../domain/outbound-limits';
import { ApiError } from '../errors';
import { iso, isoReq } from '../paging';
import { id } from '../schemas';
import { eventType } from '../webhook-endpoints/schema';

export const uuidFilter = (what: string) =>
  z.string().regex(UUID_RE, `${what} must be a uuid`).meta({ format: 'uuid' });

export const eventRow = z.object({
  id: id('the event id: the `webhook-id` of every delivery of it, retries and replays included'),
  object: z.literal('outbound_event'),
  type: eventType,
  body: z.unknown().describe('the JSON body exactly as delivered (OpenAPI `webhooks` documents each type)'),
  created_at: z.string(),
});

export const deliveryRow = z.object({
  id: id(),
  object: z.literal('outbound_delivery'),
  event_id: id('the event'),
  endpoint_id: id('the endpoint'),
  type: eventType,
  status: z.enum(OUTBOUND_DELIVERY_STATUSES),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable(),
  reason: z.string().nullable().describe('the last failure, or why it gave up'),
  next_attempt_at: z.string().nullable().describe('pending after a failed attempt: when it is tried again'),
  delivered_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const attemptRow = z.object({
  id: id(),
  object: z.literal('outbound_attempt'),
  delivery_id: id('the delivery'),
  attempt: z.number().int().describe('counts every try of the delivery, replays included: 1 for the first'),
  status_code: z.number().int().nullable().describe('null: no answer (refused address, connection error, timeout)'),
  latency_ms: z.number().int(),
  response_excerpt: z.string().nullable().describe('the first KiB of the answer'),
  error: z.string().nullable(),
  created_at: z.string(),
});

/** A replay the quota leaves no room for: 429, saying how many wait (domain/outbound-limits.ts). */
export async function withinReplayQuota<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (!(e instanceof ReplayQuotaExceeded)) throw e;
    throw new ApiError(
      429,
      'replay_quota_exceeded',
      `${e.message}: replay again once the queued deliveries are through.`,
      { waiting: e.waiting, limit: REPLAY_PENDING_CAP },
      { 'Retry-After': '30' },
    );
  }
}

export const delivery = (r: Row) => ({
  id: r.id,
  object: 'outbound_delivery' as const,
  event_id: r.event_id,
  endpoint_id: r.endpoint_id,
  type: r.type,
  status: r.status,
  attempts: r.attempts,
  last_status_code: r.last_status_code ?? null,
  reason: r.reason ?? null,
  next_attempt_at: r.status === 'pending' && r.attempts > 0 ? iso(r.next_attempt_at) : null,
  delivered_at: iso(r.delivered_at),
  created_at: isoReq(r.created_at),
  updated_at: isoReq(r.updated_at),
});
