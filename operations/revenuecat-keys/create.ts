import { z } from 'zod';
import { firstAppId } from '../../db/apps';
import { insertRevenueCatKey, revenueCatKeyById } from '../../db/revenuecat';
import { REVENUECAT_PLATFORMS } from '../../domain/revenuecat';
import { ApiError } from '../errors';
import { mode } from '../schemas';
import { defineOperation } from '../types';
import { revenuecatKeyRow } from './schema';

/**
 * A person mints a key for RevenueCat's own SDKs (docs/revenuecat-compatibility.md) for the
 * tenant's app, as the admin CLI's `key:create --revenuecat` does. The key is public (it ships
 * in apps) but only its hash is kept, so the answer carries it this once, under `public_key`;
 * the audit row keeps the id (operations/execute.ts summarize). Minting it needs what creating
 * an app needs (its publishable keys are the same kind of credential).
 */
export const createRevenueCatKeyOp = defineOperation({
  name: 'revenuecat_keys.create',
  summary:
    'Mint a key for RevenueCat’s SDKs (web, iOS or Android; test or live); its value is in the answer, this once',
  scope: 'apps:write',
  write: true,
  input: z
    .object({
      platform: z
        .enum(REVENUECAT_PLATFORMS)
        .describe('web (rcb_sb_… in test, rcb_… in live), ios (appl_…), android (goog_…)'),
      mode: mode.optional().describe('test (default): sandbox purchases; live: real ones'),
    })
    .strict(),
  output: revenuecatKeyRow
    .pick({ id: true, object: true, platform: true, mode: true, key_hint: true })
    .extend({ public_key: z.string().describe('the key: shown this once, copy it into the app now') }),
  errors: [409],
  pages: [{ page: '/settings/developer-api/revenuecat-keys', gates: ['act'] }],
  async handler(ctx, input) {
    const keyMode = input.mode ?? 'test';
    const made = await ctx.tx(async (trx) => {
      const appId = await firstAppId(trx);
      if (!appId) throw new ApiError(409, 'conflict', 'Create an app first: a key belongs to one.');
      const key = await insertRevenueCatKey(trx, {
        tenantId: ctx.tenantId,
        appId,
        platform: input.platform,
        mode: keyMode,
      });
      return { ...key, row: (await revenueCatKeyById(trx, key.key_id))! };
    });
    return {
      id: made.key_id,
      object: 'revenuecat_key' as const,
      platform: input.platform,
      mode: keyMode,
      key_hint: made.row.key_hint as string,
      public_key: made.public_key,
    };
  },
});
