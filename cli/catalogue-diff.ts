import { formatMinorAmount } from '../domain/catalogue';
import { PRODUCT_FIELDS, sameValue, type Catalogue, type CatalogueProduct, type ProductField } from './catalogue';

/** One change apply makes to the service's catalogue. */
export type CatalogueChange =
  | { kind: 'create_product'; sku: string; product: CatalogueProduct }
  | { kind: 'update_field'; sku: string; field: ProductField; from: unknown; to: unknown }
  | { kind: 'set_price'; sku: string; country: string; currency: string; from: number | null; to: number };

/** A difference apply leaves alone, said out loud so nobody thinks it was applied. */
export interface CatalogueNote {
  sku: string | null;
  text: string;
}

export interface CatalogueDiff {
  changes: CatalogueChange[];
  notes: CatalogueNote[];
}

const show = (v: unknown) => (v === null || v === undefined ? 'none' : JSON.stringify(v));

/** file (wanted) against service (current). Pure; the order follows the file's SKUs. */
export function diffCatalogue(file: Catalogue, service: Catalogue & { retired: ReadonlySet<string> }): CatalogueDiff {
  const changes: CatalogueChange[] = [];
  const notes: CatalogueNote[] = [];
  const current = new Map(service.products.map((p) => [p.sku, p]));
  const wanted = new Set(file.products.map((p) => p.sku));
  for (const want of file.products) {
    if (service.retired.has(want.sku)) {
      notes.push({ sku: want.sku, text: `${want.sku} is retired in the service; a file does not bring it back` });
      continue;
    }
    const have = current.get(want.sku);
    if (!have) {
      changes.push({ kind: 'create_product', sku: want.sku, product: want });
      for (const p of want.prices) changes.push({ kind: 'set_price', sku: want.sku, ...p, from: null, to: p.amount });
      continue;
    }
    for (const field of PRODUCT_FIELDS)
      if (!sameValue(want[field], have[field]))
        changes.push({ kind: 'update_field', sku: want.sku, field, from: have[field], to: want[field] });
    const havePrices = new Map(have.prices.map((p) => [`${p.country} ${p.currency}`, p.amount]));
    for (const p of want.prices) {
      const before = havePrices.get(`${p.country} ${p.currency}`);
      if (before !== p.amount)
        changes.push({ kind: 'set_price', sku: want.sku, ...p, from: before ?? null, to: p.amount });
      havePrices.delete(`${p.country} ${p.currency}`);
    }
    for (const key of havePrices.keys())
      notes.push({ sku: want.sku, text: `${want.sku} ${key}: priced in the service, not in the file (left as is)` });
  }
  for (const p of service.products)
    if (!wanted.has(p.sku))
      notes.push({ sku: p.sku, text: `${p.sku}: in the service, not in the file (left as is; retire it by hand)` });
  if (file.paywall && service.paywall && !sameValue(file.paywall.config, service.paywall.config))
    notes.push({ sku: null, text: 'paywall: differs from the published one (publish paywalls in the dashboard)' });
  if (file.paywall && !service.paywall)
    notes.push({ sku: null, text: 'paywall: the service has none published (publish paywalls in the dashboard)' });
  return { changes, notes };
}

/** One line per change, as plan prints it. */
export function describeChange(c: CatalogueChange): string {
  if (c.kind === 'create_product') return `+ product ${c.sku} (${c.product.name})`;
  if (c.kind === 'update_field') return `~ product ${c.sku}: ${c.field} ${show(c.from)} → ${show(c.to)}`;
  const to = formatMinorAmount(c.to, c.currency);
  if (c.from === null) return `+ price ${c.sku} ${c.country}: ${to}`;
  return `~ price ${c.sku} ${c.country}: ${formatMinorAmount(c.from, c.currency)} → ${to}`;
}
