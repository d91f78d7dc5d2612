import { z } from 'zod';
import type { Row } from '../../db/row';
import { isUuid } from '../../domain/ids';
import { endpointUrlProblem, OUTBOUND_EVENT_TYPES } from '../../domain/outbound-events';
import { outboundPortProblem } from '../../domain/outbound-ports';
import { checkLiteralHost } from '../../egress/address-guard';
import { invalidRequest, notFound } from '../errors';
import { iso, isoReq } from '../paging';
import { id } from '../schemas';
import type { OperationContext } from '../types';

export const eventType = z.enum(OUTBOUND_EVENT_TYPES);

export const endpointRow = z.object({
  id: id(),
  object: z.literal('webhook_endpoint'),
  url: z.string(),
  description: z.string().nullable(),
  event_types: z.array(eventType).describe('the events it receives; empty: every type'),
  enabled: z.boolean(),
  disabled_reason: z
    .string()
    .nullable()
    .describe('why it receives nothing (a person disabled it, or deliveries failed for the whole retry window)'),
  secret_rotated_at: z.string().nullable(),
  previous_secret_expires_at: z
    .string()
    .nullable()
    .describe('until then the previous secret signs too (rotation overlap)'),
  created_at: z.string(),
  updated_at: z.string(),
});
export const withSecret = endpointRow.extend({
  secret: z.string().describe('the signing secret (Standard Webhooks `whsec_…`): shown this once, store it now'),
});

export const endpoint = (r: Row) => ({
  id: r.id as string,
  object: 'webhook_endpoint' as const,
  url: r.url as string,
  description: (r.description ?? null) as string | null,
  event_types: r.event_types as (typeof OUTBOUND_EVENT_TYPES)[number][],
  enabled: r.enabled as boolean,
  disabled_reason: (r.disabled_reason ?? null) as string | null,
  secret_rotated_at: iso(r.secret_rotated_at),
  previous_secret_expires_at: iso(r.previous_secret_expires_at),
  created_at: isoReq(r.created_at),
  updated_at: isoReq(r.updated_at),
});

export const url = z.string().trim().min(1).max(2048).describe('where deliveries are POSTed (http or https)');
export const eventTypes = z
  .array(eventType)
  .max(OUTBOUND_EVENT_TYPES.length)
  .transform((a) => [...new Set(a)]);
export const description = z.string().trim().max(500).nullable();

/** A URL we would never fetch is refused when it is saved, not at its first delivery. */
export function checkUrl(ctx: OperationContext, raw: string): void {
  const problem = endpointUrlProblem(raw);
  if (problem) throw invalidRequest(problem, 'url');
  const portProblem = outboundPortProblem(new URL(raw), ctx.services.config.outboundWebhooks.allowedPorts);
  if (portProblem) throw invalidRequest(`url: ${portProblem}`, 'url', portProblem);
  try {
    checkLiteralHost(new URL(raw), ctx.services.config.outboundWebhooks.allowPrivateAddresses);
  } catch (e) {
    throw invalidRequest((e as Error).message, 'url');
  }
}

export const idParam = z.object({ id: id('webhook endpoint id (uuid)') });
export const known = (v: string) => {
  if (!isUuid(v)) throw notFound('webhook endpoint');
  return v;
};
