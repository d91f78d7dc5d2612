import { z } from 'zod';
import { ENTITLEMENT_STATES } from '../domain/entitlement';
import { WEBHOOK_DELIVERY_STATUSES } from '../domain/events';
import { MODES, PROVIDERS } from '../domain/providers';
import { SUBSCRIPTION_STATUSES } from '../domain/subscription';

/** Shared input/output pieces, so every list and resource is shaped the same on both surfaces. */

const intLike = (name: string) =>
  z.union([z.number(), z.string()]).transform((v, ctx) => {
    const n = typeof v === 'number' ? v : /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isInteger(n)) {
      ctx.addIssue({ code: 'custom', message: `${name} must be an integer` });
      return z.NEVER;
    }
    return n;
  });

export const MAX_LIMIT = 200;
export const DEFAULT_LIMIT = 50;
/**
 * The largest offset accepted. Past 2^53 a number is no longer exact in JSON clients, and
 * Postgres's OFFSET is a bigint; 2^31 − 1 is far beyond any real page walk and fits every
 * generated client's integer type.
 */
export const MAX_OFFSET = 2_147_483_647;

/**
 * What the OpenAPI document says of a schema whose zod form cannot say it: paging parameters
 * accept a number or a numeric string (query strings are text), which zod renders as
 * `anyOf`, while a generated client needs `type: integer` with its bounds and default.
 * `api/openapi.ts` substitutes these wherever the schema appears.
 */
export const documentedAs = z.registry<Record<string, unknown>>();

/** `limit` is clamped into 1–200 (spec), `offset` must be ≥ 0. */
export const paging = {
  limit: intLike('limit')
    .optional()
    .transform((n) => (n === undefined ? DEFAULT_LIMIT : Math.min(MAX_LIMIT, Math.max(1, n))))
    .describe('1–200, default 50; out-of-range values are clamped'),
  offset: intLike('offset')
    .optional()
    .transform((n, ctx) => {
      if (n === undefined) return 0;
      if (n < 0 || n > MAX_OFFSET) {
        ctx.addIssue({ code: 'custom', message: `offset must be between 0 and ${MAX_OFFSET}` });
        return z.NEVER;
      }
      return n;
    })
    .describe(`0–${MAX_OFFSET}, default 0`),
};
documentedAs.add(paging.limit, {
  type: 'integer',
  minimum: 1,
  maximum: MAX_LIMIT,
  default: DEFAULT_LIMIT,
  description: `page size, ${MAX_LIMIT} at most, default ${DEFAULT_LIMIT}; a value outside 1–${MAX_LIMIT} is clamped into it, not refused`,
});
documentedAs.add(paging.offset, {
  type: 'integer',
  minimum: 0,
  maximum: MAX_OFFSET,
  default: 0,
  description: `rows to skip, 0–${MAX_OFFSET}; anything else is 400 invalid_request naming offset`,
});

export const provider = z.enum(PROVIDERS);
export const mode = z.enum(MODES);
/**
 * A resource id: a uuid, documented as `format: uuid`. Input ids are not validated as such:
 * a malformed id gets the same 404 as a missing one, so existence never leaks.
 */
export const id = (description = 'id (uuid)') => z.string().meta({ description, format: 'uuid' });
export const filter = z.string().min(1).max(200);

export function pageOf<T extends z.ZodType>(row: T) {
  return z.object({
    data: z.array(row),
    pagination: z.object({
      limit: z.number().int(),
      offset: z.number().int(),
      total: z.number().int().nullable(),
      has_more: z.boolean(),
    }),
  });
}

/** The Error shape every refusal and failure has (some codes add fields, e.g. count_mismatch). */
export const errorBody = z
  .object({
    error: z.string().describe('stable machine-readable code, e.g. invalid_request, not_found'),
    detail: z.string().optional().describe('what went wrong and what to do, for people'),
    param: z.string().optional().describe('the input field at fault, when there is one'),
  })
  .passthrough();

export const timestamp = z.string().describe('ISO 8601 timestamp');
export const timestampOrNull = timestamp.nullable();

export const connectionRow = z.object({
  id: id(),
  object: z.literal('provider_connection'),
  provider,
  account_id: z.string(),
  label: z.string(),
  is_default: z.boolean(),
  is_active: z.boolean(),
  has_test_credential: z.boolean(),
  has_live_credential: z.boolean(),
  has_webhook_secret: z.boolean(),
  payment_links: z.record(z.string(), z.record(z.string(), z.object({ external_id: z.string(), url: z.string().nullable(), kind: z.string(), mode }))).describe('app id → sku → link'),
  created_at: timestamp,
});

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

export const entitlementRow = z.object({
  id: id(),
  object: z.literal('entitlement'),
  app_user_id: z.string(),
  provider,
  state: z.enum(ENTITLEMENT_STATES),
  is_sandbox: z.boolean(),
  is_active: z.boolean().describe('what the premium check answers'),
  product_id: id().nullable(),
  sku: z.string().nullable(),
  subscription_id: id().nullable(),
  expires_at: timestampOrNull,
  grace_until: timestampOrNull,
  created_at: timestamp,
  updated_at: timestamp,
});

export const couponRow = z.object({
  id: id(),
  object: z.literal('coupon'),
  code: z.string(),
  percent_off: z.number().nullable(),
  amount_off_minor: z.number().nullable(),
  currency: z.string().nullable(),
  duration: z.string(),
  active: z.boolean(),
  counterparts: z.record(z.string(), z.object({ kind: z.string(), external_id: z.string() })),
  created_at: timestamp,
});

export const paywallBody = z.object({
  id: id(),
  object: z.literal('paywall'),
  config: z.record(z.string(), z.unknown()),
  published: z.boolean(),
  has_unpublished_changes: z.boolean().describe('edited since its last publication (or never published)'),
  published_at: timestampOrNull,
  updated_at: timestamp,
});

export const webhookRow = z.object({
  id: id(),
  object: z.literal('webhook_delivery'),
  provider,
  event_id: z.string(),
  event_type: z.string(),
  mode: mode.nullable(),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  reason: z.string().nullable(),
  delivery_count: z.number().int(),
  payload: z.unknown().describe('the provider payload, redacted'),
  processed_at: timestampOrNull,
  created_at: timestamp,
});

export const auditRow = z.object({
  id: id(),
  object: z.literal('audit_entry'),
  action: z.string(),
  actor_type: z.string(),
  actor_id: z.string().nullable(),
  key_id: id().nullable(),
  request_id: z.string().nullable(),
  outcome: z.string(),
  detail: z.unknown().nullable(),
  created_at: timestamp,
});

export const tenantBody = z.object({
  id: id(),
  object: z.literal('tenant'),
  name: z.string(),
  plan: z.string(),
  subscriber_limit: z.number().int(),
  subscriber_count: z.number().int(),
  key: z.object({
    id: id(),
    name: z.string(),
    scopes: z.array(z.string()),
    expires_at: timestampOrNull,
  }),
  scopes: z.array(z.string()).describe("the calling key's own scopes"),
  created_at: timestamp,
});
