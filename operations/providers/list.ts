import { z } from 'zod';
import { connectionPage, sellingObjectsOf } from '../../db/provider-listing';
import { isoReq } from '../paging';
import { id, mode, pageOf, paging, provider, timestamp } from '../schemas';
import { defineOperation } from '../types';
import { connectionFacts } from './schema';

export const connectionRow = z.object({
  id: id(),
  object: z.literal('provider_connection'),
  provider,
  account_id: z.string(),
  ...connectionFacts.omit({ provider: true }).shape,
  payment_links: z
    .record(
      z.string(),
      z.record(z.string(), z.object({ external_id: z.string(), url: z.string().nullable(), kind: z.string(), mode })),
    )
    .describe('app id → sku → link'),
  created_at: timestamp,
});

export const listProviders = defineOperation({
  name: 'providers.list',
  summary: 'Provider connections with their default marker and payment-link maps; never credentials',
  scope: 'providers:read',
  write: false,
  input: z.object({ ...paging, provider: provider.optional() }).strict(),
  output: pageOf(connectionRow),
  rest: { method: 'GET', path: '/providers' },
  tool: {
    name: 'billing_providers',
    title: 'Providers',
    description: 'Connected providers and their payment links (filter: provider; paged).',
    // The stored connections and links; no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    return ctx.read(async (reader) => {
      const page = await connectionPage(reader, { provider: input.provider }, input);
      const links = await sellingObjectsOf(
        reader,
        page.data.map((c) => c.id),
      );
      return {
        ...page,
        data: page.data.map((c) => {
          const payment_links: Record<
            string,
            Record<string, { external_id: string; url: string | null; kind: string; mode: 'live' | 'test' }>
          > = {};
          for (const l of links.filter((x) => x.connection_id === c.id)) {
            (payment_links[l.app_id] ??= {})[l.mode === 'live' ? l.sku : `${l.sku}:test`] = {
              external_id: l.external_id,
              url: l.url,
              kind: l.kind,
              mode: l.mode,
            };
          }
          return {
            id: c.id,
            object: 'provider_connection' as const,
            provider: c.provider,
            account_id: c.account_ref,
            label: c.label,
            is_default: c.is_default,
            is_active: c.is_active,
            has_test_credential: c.has_test,
            has_live_credential: c.has_live,
            has_webhook_secret: c.has_whsec,
            payment_links,
            created_at: isoReq(c.created_at),
          };
        }),
      };
    });
  },
});
