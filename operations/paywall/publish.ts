import { z } from 'zod';
import { getPaywallRow, publishDraft } from '../../db/paywalls';
import { ApiError } from '../errors';
import { ACCOUNT, defineOperation } from '../types';
import { draftState, paywallDraft } from './draft';

/** A person publishes the draft: GET /v1/paywall (and the SDK) serve it from then on. */
export const publishPaywall = defineOperation({
  name: 'paywall.publish',
  summary: 'Publish the paywall draft: the SDK is served this version from now on',
  scope: ACCOUNT,
  write: true,
  input: z.object({}).strict(),
  output: paywallDraft,
  errors: [404],
  async handler(ctx) {
    return ctx.tx(async (trx) => {
      if (!(await publishDraft(trx))) throw new ApiError(404, 'not_found', 'There is no paywall to publish yet.');
      return draftState((await getPaywallRow(trx))!);
    });
  },
});
