import { z } from 'zod';

export const currencyCode = z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 currency code, e.g. EUR');

export const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date, YYYY-MM-DD')
  // The regex does not stop zod running this refinement: an unparseable string must not throw.
  .refine(
    (s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
    'must be a real calendar date, YYYY-MM-DD',
  );

export const rateInput = z
  .object({
    from: currencyCode.describe('the currency converted'),
    to: currencyCode.describe('the currency it is converted into'),
    rate: z
      .number()
      .positive('must be more than 0')
      .max(1e9, 'must be at most 1000000000')
      .describe('one major unit of `from` in major units of `to` (EUR→USD 1.08)'),
    valid_from: day.describe('the first day (UTC) the rate applies; it holds until the next rate of the pair'),
  })
  .strict()
  .refine((r) => r.from !== r.to, { message: 'from and to must differ', path: ['to'] });

export const rateRow = z.object({
  from: z.string(),
  to: z.string(),
  rate: z.number(),
  valid_from: z.string(),
  updated_at: z.string(),
});

export const rateList = z.object({ data: z.array(rateRow) });
