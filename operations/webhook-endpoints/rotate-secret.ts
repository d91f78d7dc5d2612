import { z } from 'zod';
import { rotateEndpointSecret } from '../../db/outbound-endpoints';
import { ROTATION_OVERLAP_SECONDS } from '../../domain/outbound-events';
import { notFound } from '../errors';
import { defineOperation } from '../types';
import { endpoint, idParam, known, withSecret } from './schema';

export const rotateEndpointSecretOp = defineOperation({
  name: 'webhook_endpoints.rotate_secret',
  summary:
    'A new signing secret, shown this once; the previous one keeps signing beside it for overlap_seconds (default one day)',
  scope: 'webhooks:write',
  write: true,
  input: idParam
    .extend({
      overlap_seconds: z
        .number()
        .int()
        .min(0)
        .max(ROTATION_OVERLAP_SECONDS.max)
        .optional()
        .describe(
          `0–${ROTATION_OVERLAP_SECONDS.max}, default ${ROTATION_OVERLAP_SECONDS.default}: how long both secrets sign`,
        ),
    })
    .strict(),
  output: withSecret,
  rest: { method: 'POST', path: '/webhook-endpoints/{id}/rotate-secret' },
  errors: [404],
  tool: {
    name: 'billing_rotate_webhook_secret',
    title: 'Rotate Webhook Secret',
    description:
      'New signing secret (shown once); the old one keeps signing for overlap_seconds (default one day) so the receiver can switch.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async handler(ctx, input) {
    const { vault } = ctx.services;
    const r = await ctx.tx((trx) =>
      rotateEndpointSecret(trx, vault, known(input.id), input.overlap_seconds ?? ROTATION_OVERLAP_SECONDS.default),
    );
    if (!r) throw notFound('webhook endpoint');
    return { ...endpoint(r.row), secret: r.secret };
  },
});
