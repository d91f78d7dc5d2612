import { z } from 'zod';
import { defineOperation } from './types';
import { connectionRow, pageOf, paging, provider } from './schemas';
import { paginate, whereGiven, isoReq } from './paging';

export const listProviders = defineOperation({
  name: 'providers.list',
  summary: 'Provider connections with their default marker and payment-link maps; never credentials',
  scope: 'providers:read',
  write: false,
  input: z.object({ ...paging, provider: provider.optional() }).strict(),
  output: pageOf(connectionRow),
  rest: { method: 'GET', path: '/providers' },
  tool: { name: 'billing_providers', description: 'Connected providers and their payment links (filter: provider; paged).' },
  async handler(ctx, input) {
    return ctx.tx(async (trx) => {
      // Select only safe columns: ciphertexts are never read on an API path.
      const base = whereGiven(trx('provider_connections'), 'provider_connections', { provider: input.provider });
      const columns = ['id', 'provider', 'account_ref', 'label', 'is_default', 'is_active', 'created_at'].map((c) => `provider_connections.${c}`);
      const flags = [
        trx.raw('credential_test_enc is not null as has_test'),
        trx.raw('credential_live_enc is not null as has_live'),
        trx.raw('webhook_secret_enc is not null as has_whsec'),
      ];
      const page = await paginate(base, { ...input, table: 'provider_connections', columns: [...columns, ...flags] }, (r: any) => r);
      const ids = page.data.map((c) => c.id);
      const links = ids.length
        ? await trx('payment_links').join('products', 'products.id', 'payment_links.product_id').whereIn('payment_links.connection_id', ids)
            .select('payment_links.connection_id', 'payment_links.app_id', 'payment_links.external_id', 'payment_links.url', 'payment_links.mode', 'products.sku', trx.raw("'payment_link' as kind"))
            .unionAll((q) => q.from('provider_plans').join('products', 'products.id', 'provider_plans.product_id').whereIn('provider_plans.connection_id', ids)
              .select('provider_plans.connection_id', 'provider_plans.app_id', 'provider_plans.external_id', trx.raw('null as url'), 'provider_plans.mode', 'products.sku', trx.raw("'plan' as kind")))
        : [];
      return {
        ...page,
        data: page.data.map((c) => {
          const payment_links: Record<string, Record<string, { external_id: string; url: string | null; kind: string; mode: 'live' | 'test' }>> = {};
          for (const l of links.filter((x: any) => x.connection_id === c.id)) {
            (payment_links[l.app_id] ??= {})[l.mode === 'live' ? l.sku : `${l.sku}:test`] = { external_id: l.external_id, url: l.url, kind: l.kind, mode: l.mode };
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
