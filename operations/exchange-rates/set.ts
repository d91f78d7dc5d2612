import { z } from 'zod';
import { upsertRates } from '../../db/exchange-rates';
import { invalidRequest } from '../errors';
import { defineOperation } from '../types';
import { rateInput, rateList } from './schema';

/**
 * Set exchange rates (docs/charts.md, "Currencies"): each one a pair's rate from a day on; a rate
 * for a pair and day already set is replaced. All or nothing: one bad rate sets none.
 */
export const setExchangeRates = defineOperation({
  name: 'exchange_rates.set',
  summary:
    'Set exchange rates for charts: from, to, rate (one `from` in `to`), valid_from; a pair and day set again is replaced',
  scope: 'charts:write',
  write: true,
  input: z
    .object({ rates: z.array(rateInput).min(1, 'give at least one rate').max(1000, 'at most 1000 rates at once') })
    .strict(),
  output: rateList,
  rest: { method: 'POST', path: '/exchange-rates' },
  fuzzModelled: false,
  async handler(ctx, input) {
    const seen = new Set<string>();
    input.rates.forEach((r, i) => {
      const k = `${r.from}>${r.to}@${r.valid_from}`;
      if (seen.has(k))
        throw invalidRequest(`rates[${i}] sets ${r.from}→${r.to} from ${r.valid_from} twice`, `rates.${i}`);
      seen.add(k);
    });
    return { data: await ctx.tx((trx) => upsertRates(trx, ctx.tenantId, input.rates)) };
  },
});
