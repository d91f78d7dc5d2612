import { z } from 'zod';
import { listRates } from '../../db/exchange-rates';
import { defineOperation } from '../types';
import { currencyCode, rateList } from './schema';

export const listExchangeRates = defineOperation({
  name: 'exchange_rates.list',
  summary: 'The exchange rates charts convert money with (docs/charts.md, "Currencies"), by pair and first day',
  scope: 'charts:read',
  write: false,
  input: z.object({ from: currencyCode.optional(), to: currencyCode.optional() }).strict(),
  output: rateList,
  rest: { method: 'GET', path: '/exchange-rates' },
  fuzzModelled: false,
  async handler(ctx, input) {
    return { data: await ctx.read((reader) => listRates(reader, input)) };
  },
});
