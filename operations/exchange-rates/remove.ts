import { z } from 'zod';
import { deleteRate } from '../../db/exchange-rates';
import { notFound } from '../errors';
import { defineOperation } from '../types';
import { currencyCode, day } from './schema';

export const removeExchangeRate = defineOperation({
  name: 'exchange_rates.remove',
  summary: 'Remove one exchange rate (a pair from a day): the rate before it applies again',
  scope: 'charts:write',
  write: true,
  input: z.object({ from: currencyCode, to: currencyCode, valid_from: day }).strict(),
  output: z.object({ removed: z.literal(true) }),
  rest: { method: 'DELETE', path: '/exchange-rates/{from}/{to}/{valid_from}', noBody: true },
  fuzzModelled: false,
  errors: [404],
  async handler(ctx, input) {
    if (!(await ctx.tx((trx) => deleteRate(trx, input.from, input.to, input.valid_from))))
      throw notFound('exchange rate');
    return { removed: true as const };
  },
});
