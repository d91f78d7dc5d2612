import { z } from 'zod';
import { MODES, PROVIDERS } from '../domain/providers';

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
