import { z } from 'zod';
import { digestBody, ensureDigest } from '../../db/event-digests';
import { isDigestDate } from '../../domain/event-digest';
import { ApiError, invalidRequest } from '../errors';
import { defineOperation } from '../types';

const digest = z.object({
  date: z.string().describe('the UTC day, YYYY-MM-DD'),
  tenant_id: z.string(),
  events: z.number().int().describe('events about customers recorded that day (UTC)'),
  root: z
    .string()
    .describe('RFC 6962 Merkle root over each customer’s last event hash of the day, sorted (docs: event proofs)'),
  signature: z
    .string()
    .describe('compact JWS (EdDSA, keys at /.well-known/jwks.json) whose payload is this object without signature'),
});

/**
 * A tenant's signed digest of one day (docs/event-proofs.md, "Daily digest"): made by the daily
 * Schedule shortly after the day ends, or when first asked once it has; the same signed answer
 * ever after. A day that has not ended yet has no digest.
 */
export const getDigest = defineOperation({
  name: 'digests.get',
  summary: 'The signed digest of one day’s events: their count and a root over every customer’s hash chain',
  scope: 'exports:read',
  write: false,
  input: z.object({ date: z.string().describe('YYYY-MM-DD (UTC)') }).strict(),
  output: digest,
  rest: { method: 'GET', path: '/digests/{date}' },
  fuzzModelled: false,
  errors: [404],
  tool: {
    name: 'billing_digest',
    title: 'Daily Digest',
    description:
      'The signed digest of one UTC day (YYYY-MM-DD): how many customer events were recorded and the Merkle root over their hash chains, with a JWS signature checkable against the published keys.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    if (!isDigestDate(input.date) || input.date < '2000-01-01')
      throw invalidRequest('date must be a calendar day, YYYY-MM-DD', 'date');
    if (input.date >= new Date().toISOString().slice(0, 10))
      throw new ApiError(404, 'not_found', 'A day’s digest is made once the day has ended (UTC).');
    const row = await ensureDigest(ctx.services.db, ctx.services.vault, ctx.tenantId, input.date);
    return digestBody(ctx.tenantId, row);
  },
});
