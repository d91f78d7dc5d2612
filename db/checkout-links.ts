import type { Knex } from 'knex';
import { isUuid } from '../domain/ids';
import type { Mode, WebProviderId } from '../domain/providers';

export interface CheckoutLinkRow {
  provider: WebProviderId;
  mode: Mode;
  url: string;
  product_id: string;
  sku: string;
}

/**
 * The app's payment links (table `payment_links`) to an active product named by id or sku, in
 * one mode, at the given providers, in no particular order. Run inside withTenant.
 */
export async function findCheckoutLinks(
  trx: Knex.Transaction,
  q: { appId: string; mode: Mode; providers: readonly string[]; planId: string },
): Promise<CheckoutLinkRow[]> {
  return trx('payment_links as l')
    .join('products as p', 'p.id', 'l.product_id')
    .where('l.app_id', q.appId)
    .where('l.mode', q.mode)
    .whereIn('l.provider', [...q.providers])
    .where('p.active', true)
    .where((w) => {
      w.where('p.sku', q.planId);
      if (isUuid(q.planId)) w.orWhere('p.id', q.planId);
    })
    .select('l.provider', 'l.mode', 'l.url', 'p.id as product_id', 'p.sku');
}
