import { z } from 'zod';
import { createConnection } from '../../db/connection-service';
import type { ProviderId } from '../../domain/providers';
import { ACCOUNT, defineOperation } from '../types';
import { connectionView, startProof, writeConnection } from './connection';

export const connectProvider = defineOperation({
  name: 'providers.connect',
  summary: 'Add a provider connection for an account id (no secret yet); its proof starts at once',
  scope: ACCOUNT,
  write: true,
  // Loose on purpose: the connection service judges these and says why in the page's words.
  input: z.object({ provider: z.string(), account_ref: z.string(), label: z.string().optional() }).strict(),
  output: connectionView,
  pages: [{ page: '/providers', gates: ['open', 'act'] }],
  async handler(ctx, input) {
    const c = await writeConnection(ctx, (trx) =>
      createConnection(trx, ctx.services.vault, {
        provider: input.provider as ProviderId,
        account_ref: input.account_ref,
        label: input.label,
      }),
    );
    await startProof(ctx, c);
    return c;
  },
});
