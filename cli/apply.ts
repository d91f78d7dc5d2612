import { CliFailure, request, type ApiConfig } from './api-client';
import { PRODUCT_FIELDS, type CatalogueProduct } from './catalogue';
import { describeChange, type CatalogueChange } from './catalogue-diff';
import type { Plan } from './plan';

interface WrittenProduct {
  id: string;
}

/**
 * Write the plan's catalogue changes through REST, product by product: the product (created, or
 * its changed fields, with upsert) and then its changed prices. Each write is audited by the
 * service under the key that made it. `say` gets one line per write.
 */
export async function writeCatalogueChanges(cfg: ApiConfig, plan: Plan, say: (line: string) => void): Promise<void> {
  const bySku = new Map<string, CatalogueChange[]>();
  for (const c of plan.changes) bySku.set(c.sku, [...(bySku.get(c.sku) ?? []), c]);
  for (const [sku, changes] of bySku) {
    let id = plan.service.ids.get(sku);
    const create = changes.find((c) => c.kind === 'create_product');
    const fields = changes.filter((c) => c.kind === 'update_field');
    if (create || fields.length) {
      const body: Record<string, unknown> = { sku, upsert: true };
      if (create) for (const f of PRODUCT_FIELDS) body[f] = (create.product as CatalogueProduct)[f];
      for (const c of fields) body[c.field] = c.to;
      const written = await request<WrittenProduct>(cfg, 'POST', '/products', body);
      id = written.body.id;
      for (const c of [create, ...fields].filter(Boolean) as CatalogueChange[]) say(`done: ${describeChange(c)}`);
    }
    const prices = changes.filter((c) => c.kind === 'set_price');
    if (prices.length) {
      if (!id) throw new CliFailure('not_found', `product ${sku} has no id in the service`);
      await request(cfg, 'POST', `/products/${id}/prices`, {
        prices: prices.map((c) => ({ country: c.country, currency: c.currency, amount: c.to })),
      });
      for (const c of prices) say(`done: ${describeChange(c)}`);
    }
  }
}
