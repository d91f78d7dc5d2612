import { z } from 'zod';
import { defineOperation } from '../types';
import { chartList, listedCharts } from './schema';

export const listCharts = defineOperation({
  name: 'charts.list',
  summary: 'The charts this service draws (docs/charts.md): name, title and what each shows',
  scope: 'charts:read',
  write: false,
  input: z.object({}).strict(),
  output: chartList,
  rest: { method: 'GET', path: '/charts' },
  fuzzModelled: false,
  async handler() {
    return { data: listedCharts() };
  },
});
