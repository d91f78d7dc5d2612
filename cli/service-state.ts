import { CliFailure, listAll, request, type ApiConfig } from './api-client';
import { normaliseProduct, type Catalogue, type CatalogueProduct } from './catalogue';

interface ProductRow extends Omit<CatalogueProduct, 'prices'> {
  id: string;
  active: boolean;
}
interface ProductDetail extends ProductRow {
  pricing: { country: string; currency: string; amount_minor: number }[];
}

/** The service's catalogue as the REST API shows it; retired products are kept apart. */
export interface ServiceCatalogue extends Catalogue {
  /** SKU → product id, for the writes. */
  ids: Map<string, string>;
  /** SKUs of retired products (a file does not bring one back). */
  retired: Set<string>;
}

export async function readServiceCatalogue(cfg: ApiConfig): Promise<ServiceCatalogue> {
  const rows = await listAll<ProductRow>(cfg, '/products');
  const products: CatalogueProduct[] = [];
  const ids = new Map<string, string>();
  const retired = new Set<string>();
  for (const row of [...rows].sort((a, b) => a.sku.localeCompare(b.sku))) {
    ids.set(row.sku, row.id);
    if (!row.active) {
      retired.add(row.sku);
      continue;
    }
    const detail = (await request<ProductDetail>(cfg, 'GET', `/products/${row.id}`)).body;
    products.push(
      normaliseProduct({
        ...detail,
        prices: detail.pricing.map((p) => ({ country: p.country, currency: p.currency, amount: p.amount_minor })),
      }),
    );
  }
  return { products, ids, retired, paywall: await readPaywall(cfg) };
}

async function readPaywall(cfg: ApiConfig): Promise<Catalogue['paywall']> {
  try {
    const p = (await request<{ published: boolean; config: Record<string, unknown> }>(cfg, 'GET', '/paywall')).body;
    return { published: p.published, config: p.config };
  } catch (e) {
    // 404: no paywall is published; the file then carries none.
    if (e instanceof CliFailure && e.status === 404) return null;
    throw e;
  }
}
