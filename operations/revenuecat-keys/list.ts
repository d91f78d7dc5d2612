import { z } from 'zod';
import { listRevenueCatKeys } from '../../db/revenuecat';
import { defineOperation } from '../types';
import { revenuecatKey, revenuecatKeyRow } from './schema';

/**
 * The tenant's keys for RevenueCat's own SDKs, newest first (hints only): the Developer API
 * page's list. Read with the scope publishable keys are read with; no REST route and no tool:
 * the keys are minted by a person on that page or by the operator's CLI.
 */
export const listRevenueCatKeysOp = defineOperation({
  name: 'revenuecat_keys.list',
  summary: 'The keys for RevenueCat’s SDKs, newest first (hints only)',
  scope: 'apps:read',
  write: false,
  input: z.object({}).strict(),
  output: z.object({ data: z.array(revenuecatKeyRow) }),
  // Their own page too: every role that reads sees them (hints only), as it sees the apps.
  pages: [{ page: '/settings/developer-api/revenuecat-keys', gates: ['open'] }],
  async handler(ctx) {
    return { data: (await ctx.tx((trx) => listRevenueCatKeys(trx))).map(revenuecatKey) };
  },
});
