import { z } from 'zod';
import { isUuid, UUID_RE } from '../../domain/ids';
import { OUTBOUND_DELIVERY_STATUSES } from '../../domain/outbound-events';
import { attemptPage, deliveryExists, eventPage, outboundDeliveryPage, replayEvent, replayFailedSince, ReplayQuotaExceeded } from '../../db/outbound-events';
import { REPLAY_BATCH, REPLAY_PENDING_CAP } from '../../domain/outbound-limits';
import type { Row } from '../../db/row';
import { ApiError, notFound } from '../errors';
import { defineOperation } from '../types';
import { id, pageOf, paging } from '../schemas';
import { iso, isoReq } from '../paging';
import { eventType } from './endpoints';

const uuidFilter = (what: string) => z.string().regex(UUID_RE, `${what} must be a uuid`).meta({ format: 'uuid' });

const eventRow = z.object({
  id: id('the event id: the `webhook-id` of every delivery of it, retries and replays included'),
  object: z.literal('outbound_event'),
  type: eventType,
  body: z.unknown().describe('the JSON body exactly as delivered (OpenAPI `webhooks` documents each type)'),
  created_at: z.string(),
});

const deliveryRow = z.object({
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

const attemptRow = z.object({
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
async function withinReplayQuota<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (!(e instanceof ReplayQuotaExceeded)) throw e;
    throw new ApiError(429, 'replay_quota_exceeded', `${e.message}: replay again once the queued deliveries are through.`, { waiting: e.waiting, limit: REPLAY_PENDING_CAP }, { 'Retry-After': '30' });
  }
}

const delivery = (r: Row) => ({
  id: r.id, object: 'outbound_delivery' as const, event_id: r.event_id, endpoint_id: r.endpoint_id, type: r.type, status: r.status,
  attempts: r.attempts, last_status_code: r.last_status_code ?? null, reason: r.reason ?? null,
  next_attempt_at: r.status === 'pending' && r.attempts > 0 ? iso(r.next_attempt_at) : null,
  delivered_at: iso(r.delivered_at), created_at: isoReq(r.created_at), updated_at: isoReq(r.updated_at),
});

export const listOutboundEvents = defineOperation({
  name: 'outbound_events.list',
  summary: 'Events recorded for the tenant’s webhook endpoints, newest first, with the body each delivery carries',
  scope: 'webhooks:read',
  write: false,
  input: z.object({ ...paging, type: eventType.optional() }).strict(),
  output: pageOf(eventRow),
  rest: { method: 'GET', path: '/outbound-events' },
  async handler(ctx, input) {
    const page = await ctx.tx((trx) => eventPage(trx, { type: input.type }, input));
    return { ...page, data: page.data.map((r) => ({ id: r.id, object: 'outbound_event' as const, type: r.type, body: r.body, created_at: isoReq(r.created_at) })) };
  },
});

export const listOutboundDeliveries = defineOperation({
  name: 'outbound_deliveries.list',
  summary: 'The delivery log: one row per event and endpoint, its status, attempts and last answer',
  scope: 'webhooks:read',
  write: false,
  input: z.object({ ...paging, event_id: uuidFilter('event_id').optional(), endpoint_id: uuidFilter('endpoint_id').optional(), status: z.enum(OUTBOUND_DELIVERY_STATUSES).optional() }).strict(),
  output: pageOf(deliveryRow),
  rest: { method: 'GET', path: '/outbound-deliveries' },
  async handler(ctx, input) {
    const page = await ctx.tx((trx) => outboundDeliveryPage(trx, { event_id: input.event_id, endpoint_id: input.endpoint_id, status: input.status }, input));
    return { ...page, data: page.data.map(delivery) };
  },
});

export const listOutboundAttempts = defineOperation({
  name: 'outbound_deliveries.attempts',
  summary: 'Every HTTP attempt of one delivery: status code, latency and the first KiB of the answer',
  scope: 'webhooks:read',
  write: false,
  input: z.object({ ...paging, id: id('delivery id (uuid)') }).strict(),
  output: pageOf(attemptRow),
  rest: { method: 'GET', path: '/outbound-deliveries/{id}/attempts' },
  errors: [404],
  async handler(ctx, input) {
    if (!isUuid(input.id)) throw notFound('delivery');
    return ctx.tx(async (trx) => {
      if (!(await deliveryExists(trx, input.id))) throw notFound('delivery');
      const page = await attemptPage(trx, { delivery_id: input.id }, input);
      return {
        ...page,
        data: page.data.map((r) => ({
          id: r.id, object: 'outbound_attempt' as const, delivery_id: r.delivery_id, attempt: r.attempt, status_code: r.status_code ?? null,
          latency_ms: r.latency_ms, response_excerpt: r.response_excerpt ?? null, error: r.error ?? null, created_at: isoReq(r.created_at),
        })),
      };
    });
  },
});

export const replayOutboundEvent = defineOperation({
  name: 'outbound_events.replay',
  summary: `Deliver one event again, with the same webhook-id (receivers dedupe on it): to one endpoint, or to every endpoint it went to (429 replay_quota_exceeded while ${REPLAY_PENDING_CAP} of the tenant's deliveries wait)`,
  scope: 'webhooks:write',
  write: true,
  input: z.object({ id: id('event id (uuid)'), endpoint_id: uuidFilter('endpoint_id').optional() }).strict(),
  output: z.object({ id: id(), object: z.literal('replay'), queued: z.number().int() }),
  rest: { method: 'POST', path: '/outbound-events/{id}/replay' },
  errors: [404],
  async handler(ctx, input) {
    if (!isUuid(input.id)) throw notFound('event');
    const queued = await withinReplayQuota(() => ctx.tx((trx) => replayEvent(trx, ctx.tenantId, input.id, input.endpoint_id)));
    if (queued === undefined) throw notFound(input.endpoint_id ? 'event or endpoint' : 'event');
    return { id: input.id, object: 'replay' as const, queued };
  },
});

export const replayFailedDeliveries = defineOperation({
  name: 'outbound_deliveries.replay_failed',
  summary: `Deliver again every delivery that failed since a time (optionally of one endpoint), ${REPLAY_BATCH} per call and no more than brings the tenant's waiting deliveries to ${REPLAY_PENDING_CAP} (at it: 429 replay_quota_exceeded); has_more says to call again`,
  scope: 'webhooks:write',
  write: true,
  input: z.object({
    since: z.iso.datetime({ offset: true }).describe('ISO 8601 time: deliveries that failed at or after it'),
    endpoint_id: uuidFilter('endpoint_id').optional(),
  }).strict(),
  output: z.object({ object: z.literal('replay'), queued: z.number().int(), has_more: z.boolean() }),
  rest: { method: 'POST', path: '/outbound-deliveries/replay' },
  async handler(ctx, input) {
    const r = await withinReplayQuota(() => ctx.tx((trx) => replayFailedSince(trx, ctx.tenantId, input.since, input.endpoint_id)));
    return { object: 'replay' as const, ...r };
  },
});
