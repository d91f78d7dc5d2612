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

/** A history with what a chart files it by: its mode, provider, present product and country. */
export interface FiledHistory {
  mode: Mode;
  provider: string;
  /** The record's present product id, or null. */
  product: string | null;
  country: string | null;
  history: SubscriptionHistory;
}

const STATUS_MOVES = (c: string) =>
  `array_agg(extract(epoch from ${c}.changed_at)::float8 * 1000 order by ${c}.changed_at, ${c}.id)`;

/**
 * Every history of the filtered subscriptions, in one statement: each record's statuses and
 * products, oldest first, as arrays (one row per subscription; the status history is read from
 * `subscription_changes_history` in subscription order). Read only, in the tenant's read
 * transaction (RLS). `mode` null: every mode (the fold job's first build of a tenant).
 */
export async function readFiledHistories(
  reader: TenantReader,
  filter: Omit<ChartFilter, 'mode'> & { mode: Mode | null },
): Promise<FiledHistory[]> {
  const values: unknown[] = [];
  const where: string[] = [];
  const modeIs = (col: string) => (filter.mode ? `${col} = $1` : 'true');
  if (filter.mode) values.push(filter.mode);
  if (filter.mode) where.push('s.mode = $1');
  if (filter.provider) where.push(`s.provider = $${values.push(filter.provider)}`);
  if (filter.country) where.push(`s.country = $${values.push(filter.country)}`);
  if (filter.product) {
    const i = values.push(filter.product);
    where.push(`s.product_id in (select id from products where id::text = $${i}::text or sku = $${i}::text)`);
  }
  const rows = await reader.rows(
    `with status_moves as (
       select subscription_id, mode, ${STATUS_MOVES('c')} as at, array_agg(to_status order by changed_at, id) as status
         from subscription_changes c where ${modeIs('mode')} group by subscription_id, mode
     ), product_moves as (
       select subscription_id, ${STATUS_MOVES('p')} as at, array_agg(product_id::text order by changed_at, id) as product
         from subscription_product_changes p group by subscription_id
     )
     select s.id, s.mode, coalesce(s.app_user_id, s.id::text) as customer, s.provider, s.country, s.product_id::text as product_id,
            st.at as status_at, st.status, pr.at as product_at, pr.product
       from subscriptions s
       join status_moves st on st.subscription_id = s.id and st.mode = s.mode
       left join product_moves pr on pr.subscription_id = s.id
      where ${where.length ? where.join(' and ') : 'true'}`,
    values,
  );
  return rows.map((r) => filed(r as RawHistory));
}

/**
 * The histories of some subscriptions, and of every subscription of some customers (an app
 * user, or a record without one), each read by its index: what the fold job counts again.
 */
export async function readHistoriesOf(
  reader: TenantReader,
  ids: readonly string[],
  customers: readonly string[],
): Promise<FiledHistory[]> {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const records = [...new Set([...ids, ...customers.filter((c) => uuid.test(c))])];
  const rows = await reader.rows(
    `select s.id, s.mode, coalesce(s.app_user_id, s.id::text) as customer, s.provider, s.country, s.product_id::text as product_id,
            st.at as status_at, st.status, pr.at as product_at, pr.product
       from subscriptions s
       cross join lateral (select ${STATUS_MOVES('c')} as at, array_agg(c.to_status order by c.changed_at, c.id) as status
                             from subscription_changes c where c.subscription_id = s.id and c.mode = s.mode) st
       cross join lateral (select ${STATUS_MOVES('p')} as at, array_agg(p.product_id::text order by p.changed_at, p.id) as product
                             from subscription_product_changes p
                            where p.tenant_id = s.tenant_id and p.subscription_id = s.id) pr
      where st.at is not null
        and (s.id = any($1::uuid[]) or s.app_user_id = any($2::text[]))`,
    [records, customers],
  );
  return rows.map((r) => filed(r as RawHistory));
}

interface RawHistory {
  id: string;
  mode: Mode;
  customer: string;
  provider: string;
  country: string | null;
  product_id: string | null;
  status_at: number[];
  status: SubscriptionStatus[];
  product_at: number[] | null;
  product: (string | null)[] | null;
}

function filed(r: RawHistory): FiledHistory {
  const steps = mergeMoves(
    r.status_at.map((at, i) => ({ at, status: r.status[i] })),
    (r.product_at ?? []).map((at, i) => ({ at, product_id: r.product?.[i] ?? null })),
    r.product_id,
  );
  return {
    mode: r.mode,
    provider: r.provider,
    product: r.product_id,
    country: r.country,
    history: { id: String(r.id), customer: r.customer, provider: r.provider, country: r.country, steps },
  };
}

/** The tenant's products with their tier and prices (oldest first). */
export async function readCatalogue(reader: TenantReader): Promise<Catalogue> {
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
