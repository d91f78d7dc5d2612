import { z } from 'zod';
import { updateConnectionSecrets } from '../../db/connection-service';
import { getConnectionSafe } from '../../db/connections';
import { credentialRefusal } from '../../providers/credential-check';
import { invalidRequest, notFound } from '../errors';
import { ACCOUNT, defineOperation } from '../types';
import { connectionView, startProof, writeConnection } from './connection';

const credential = z.record(z.string(), z.string());

export const updateProviderCredentials = defineOperation({
  name: 'providers.update_credentials',
  summary:
    "Replace a connection's test or live credentials and its webhook secret (never shown back); new credentials start its proof",
  scope: ACCOUNT,
  write: true,
  input: z
    .object({
      id: z.string(),
      credentials: z.object({ test: credential.optional(), live: credential.optional() }).strict().optional(),
      webhook_secret: z.string().optional(),
    })
    .strict(),
  output: connectionView.extend({ proving: z.boolean() }),
  async handler(ctx, input) {
    const secrets = { credentials: input.credentials, webhook_secret: input.webhook_secret };
    const updated = await writeConnection(ctx, async (trx) => {
      const c = await getConnectionSafe(trx, input.id);
      if (!c) throw notFound('provider connection');
      // A credential for another base URL (a live key against the emulator...) is refused before it is stored.
      const refusal = Object.values(input.credentials ?? {})
        .map((cred) => cred && credentialRefusal(c.provider, cred, ctx.services.config.providerBaseUrls[c.provider]))
        .find(Boolean);
      if (refusal) throw invalidRequest(refusal, 'credentials');
      return updateConnectionSecrets(trx, ctx.services.vault, c.id, secrets);
    });
    const proving = input.credentials ? (await startProof(ctx, updated)) !== null : false;
    return { ...updated, proving };
  },
});
