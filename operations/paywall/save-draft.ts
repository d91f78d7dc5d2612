import { getPaywallRow, saveDraft } from '../../db/paywalls';
import { knownSkus } from '../../db/products';
import { paywallEditSchema } from '../../domain/paywall';
import { ApiError } from '../errors';
import { ACCOUNT, defineOperation } from '../types';
import { draftState, paywallDraft } from './draft';

/**
 * A person saves the paywall's draft in the dashboard; what the SDK gets changes only on
 * publish (paywall.publish). Every product must be in the tenant's catalogue.
 */
export const savePaywallDraft = defineOperation({
  name: 'paywall.save_draft',
  summary:
    'Save the paywall draft: title, products in order with their labels, the default product; the SDK keeps the published version',
  scope: ACCOUNT,
  write: true,
  input: paywallEditSchema,
  output: paywallDraft,
  errors: [400],
  pages: [{ page: '/paywall', gates: ['act'] }],
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      const known = await knownSkus(trx, input.skus);
      const missing = input.skus.filter((s) => !known.has(s));
      if (missing.length)
        throw new ApiError(400, 'unknown_product', `No product with SKU ${missing.join(', ')} in your catalogue.`, {
          param: 'skus',
        });
      const previous = await getPaywallRow(trx);
      // The edited fields are replaced as a whole (one left out is cleared); keys no form edits
      // (an older config's theme and features) stay as they were.
      const { title, subtitle, skus, labels, default_sku } = input;
      await saveDraft(trx, ctx.tenantId, {
        ...((previous?.config as Record<string, unknown>) ?? {}),
        title,
        subtitle,
        skus,
        labels,
        default_sku,
      });
      return draftState((await getPaywallRow(trx))!);
    });
  },
});
