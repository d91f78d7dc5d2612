import { Document, isMap, isSeq, type YAMLMap } from 'yaml';
import { DEFAULT_ENTITLEMENT } from '../domain/revenuecat';
import { PRODUCT_FIELDS, sortKeys, type Catalogue, type CatalogueProduct } from './catalogue';

const HEADER = [
  ' The catalogue as code: products, per-country prices and the published paywall.',
  ' Check it with `billing catalogue plan -f <this file>`, write it with `billing catalogue apply -f <this file>`.',
  ' Fields are checked against cli/catalogue.schema.json (`billing catalogue schema` prints it); unknown fields are errors.',
  ' yaml-language-server: $schema=./catalogue.schema.json',
].join('\n');

/** A product as the file writes it: fields in a fixed order, null and default-free values left out. */
function fileProduct(p: CatalogueProduct): Record<string, unknown> {
  const out: Record<string, unknown> = { sku: p.sku };
  for (const f of PRODUCT_FIELDS) {
    const v = p[f];
    if (v === null || v === undefined) continue;
    if (f === 'type' && v === 'subscription') continue;
    if (f === 'kind' && v === 'digital') continue;
    if (f === 'entitlement' && v === DEFAULT_ENTITLEMENT) continue;
    out[f] = f === 'trial_per_platform' ? sortKeys(v) : v;
  }
  out.prices = p.prices.map((x) => ({ country: x.country, currency: x.currency, amount: x.amount }));
  return out;
}

/**
 * The file `billing catalogue pull` writes. Stable: the same catalogue gives the same bytes
 * (products by SKU, prices by country then currency, object keys sorted in the paywall), so a
 * pull request shows only what changed. Comments a person adds are theirs to keep in review;
 * pull writes its own header.
 */
export function catalogueYaml(c: Catalogue): string {
  const body: Record<string, unknown> = { version: 1, products: c.products.map(fileProduct) };
  if (c.paywall) body.paywall = { published: c.paywall.published, config: sortKeys(c.paywall.config) };
  const doc = new Document(body);
  doc.commentBefore = HEADER;
  const products = doc.get('products', true);
  if (isSeq(products))
    for (const item of products.items) {
      const prices = (item as YAMLMap).get('prices', true);
      if (isSeq(prices)) for (const price of prices.items) if (isMap(price)) price.flow = true;
      if (isSeq(prices)) prices.commentBefore = ' amount: minor units of the currency (999 USD is 9.99)';
    }
  const paywall = doc.get('paywall', true);
  if (isMap(paywall))
    paywall.commentBefore = ' Read only: plan says when it differs; paywalls are published in the dashboard.';
  return doc.toString({ lineWidth: 0 });
}
