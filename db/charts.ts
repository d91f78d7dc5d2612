import type { Mode } from '../domain/providers';
import type { SubscriptionStatus } from '../domain/subscription';
import { mergeMoves, type Catalogue, type ChartProduct, type SubscriptionHistory } from '../domain/charts/history';
import type { TenantReader } from './tenant-read';

/** Which subscriptions a chart counts (docs/charts.md): one mode, optionally one provider, product or country. */
export interface ChartFilter {
  mode: Mode;
  provider?: string;
  /** A product id or SKU. */
  product?: string;
  country?: string;
}

export interface ChartSource {
  histories: SubscriptionHistory[];
  catalogue: Catalogue;
  /** The database's now() (epoch ms): what the read saw is known up to it. */
  now: number;
}

/**
 * Every history of the filtered subscriptions, in one statement: each record's statuses and
 * products, oldest first, as arrays (one row per subscription; the status history is read from
 * `subscription_changes_history` in subscription order). The pure definitions in
 * domain/charts/ do the counting. Read only, in the tenant's read transaction (RLS).
 */
export async function readChartSource(reader: TenantReader, filter: ChartFilter): Promise<ChartSource> {
  const values: unknown[] = [filter.mode];
  const where: string[] = ['s.mode = $1'];
  if (filter.provider) where.push(`s.provider = $${values.push(filter.provider)}`);
  if (filter.country) where.push(`s.country = $${values.push(filter.country)}`);
  if (filter.product) {
    const i = values.push(filter.product);
    where.push(`s.product_id in (select id from products where id::text = $${i}::text or sku = $${i}::text)`);
  }
  const rows = await reader.rows(
    `with status_moves as (
       select subscription_id, array_agg(extract(epoch from changed_at)::float8 * 1000 order by changed_at, id) as at,
              array_agg(to_status order by changed_at, id) as status
         from subscription_changes where mode = $1 group by subscription_id
     ), product_moves as (
       select subscription_id, array_agg(extract(epoch from changed_at)::float8 * 1000 order by changed_at, id) as at,
              array_agg(product_id::text order by changed_at, id) as product
         from subscription_product_changes group by subscription_id
     )
     select s.id, coalesce(s.app_user_id, s.id::text) as customer, s.provider, s.country, s.product_id::text as product_id,
            st.at as status_at, st.status, pr.at as product_at, pr.product
       from subscriptions s
       join status_moves st on st.subscription_id = s.id
       left join product_moves pr on pr.subscription_id = s.id
      where ${where.join(' and ')}`,
    values,
  );
  const histories = rows.map((r) => historyOf(r as RawHistory));
  const catalogue = await readCatalogue(reader);
  const [{ now }] = await reader.rows('select extract(epoch from now())::float8 * 1000 as now', []);
  return { histories, catalogue, now: Number(now) };
}

interface RawHistory {
  id: string;
  customer: string;
  provider: string;
  country: string | null;
  product_id: string | null;
  status_at: number[];
  status: SubscriptionStatus[];
  product_at: number[] | null;
  product: (string | null)[] | null;
}

function historyOf(r: RawHistory): SubscriptionHistory {
  const steps = mergeMoves(
    r.status_at.map((at, i) => ({ at, status: r.status[i] })),
    (r.product_at ?? []).map((at, i) => ({ at, product_id: r.product?.[i] ?? null })),
    r.product_id,
  );
  return { id: r.id, customer: r.customer, provider: r.provider, country: r.country, steps };
}

/** The tenant's products with their tier and prices (oldest first). */
async function readCatalogue(reader: TenantReader): Promise<Catalogue> {
  const rows = await reader.rows(
    `select p.id::text as id, p.sku, p.tier, pr.country, pr.currency, pr.amount_minor
       from products p left join prices pr on pr.product_id = p.id
      order by p.id, pr.created_at, pr.id`,
    [],
  );
  const out = new Map<string, ChartProduct>();
  for (const r of rows) {
    const id = String(r.id);
    const p = out.get(id) ?? { sku: String(r.sku), tier: (r.tier ?? null) as ChartProduct['tier'], prices: [] };
    if (r.currency)
      p.prices.push({ country: String(r.country), currency: String(r.currency), amount_minor: Number(r.amount_minor) });
    out.set(id, p);
  }
  return out;
}
