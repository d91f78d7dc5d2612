import { z } from 'zod';
import { connectProvenByOAuth } from '../../db/connection-service';
import { ApiError, invalidRequest } from '../errors';
import { importOnProof } from '../imports/on-proof';
import { provider } from '../schemas';
import { ACCOUNT, defineOperation } from '../types';
import { connectionView, writeConnection } from './connection';

export const connectProviderOAuth = defineOperation({
  name: 'providers.connect_oauth',
  summary:
    'Connect a provider account with the code its OAuth consent returned: the connection is stored verified, as the consent named the account',
  scope: ACCOUNT,
  write: true,
  // The page has checked the OAuth state against the person's cookie before it calls this.
  input: z.object({ provider, code: z.string().min(1).max(2048) }).strict(),
  output: connectionView.extend({ replaced_claims: z.number().int(), mode: z.enum(['test', 'live']) }),
  async handler(ctx, input) {
    const { config, adapters } = ctx.services;
    const client = config.oauthClients[input.provider];
    const adapter = adapters[input.provider];
    if (!client || !adapter?.exchangeOAuthCode)
      throw invalidRequest(`OAuth is not configured for ${input.provider}.`, 'provider');
    let result: Awaited<ReturnType<NonNullable<typeof adapter.exchangeOAuthCode>>>;
    try {
      result = await adapter.exchangeOAuthCode(config.providerBaseUrls[input.provider], client, input.code);
    } catch (err) {
      // The provider's own words may quote what was sent: only its kind is logged.
      ctx.log.warn({ provider: input.provider, err: (err as Error).name }, 'oauth code exchange failed');
      throw new ApiError(502, 'provider_error', `${input.provider} refused the connection; try again.`);
    }
    // The consent screen named the account: the connection is proven as it is stored.
    const c = await writeConnection(ctx, (trx) =>
      connectProvenByOAuth(trx, ctx.services.vault, {
        provider: input.provider,
        account_ref: result.account_ref,
        label: result.account_ref,
        credentials: { [result.mode]: result.credential },
      }),
    );
    // The account is proven: its existing subscribers come in by themselves (once per connection).
    await importOnProof(ctx, c.id);
    return { ...c, mode: result.mode };
  },
});
