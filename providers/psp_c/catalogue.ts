import type { PriceSpec, ProductSpec, RemoteProduct, Tier } from '../types';
import type { RazorpayClient } from './client';

/**
 * Razorpay has no product object. A product is an Item (name, one price, active flag)
 * tagged with our ids in `notes`; its per-country prices are Plans (immutable, one per
 * (country, currency) row, tagged the same way). Razorpay takes no idempotency key on
 * these calls, so every write first looks for the object by our notes: a retry after a
 * lost answer finds what the first attempt created instead of making a second one.
 *
 * Razorpay documents no `notes` on Items; the emulator keeps them. Should the live API
 * refuse them, the item's `description` (which is the SKU) is the fallback match.
 */
export interface RzpItem {
  id: string;
  name: string;
  description: string | null;
  amount: number;
  currency: string;
  active: boolean;
  notes?: Record<string, unknown> | unknown[];
}

export interface RzpPlan {
  id: string;
  period: string;
  interval: number;
  item: { id: string; name: string; amount: number; currency: string; active?: boolean };
  notes?: Record<string, unknown> | unknown[];
  created_at: number;
}

/** Razorpay returns `notes: []` when empty. */
export function notesOf(o: { notes?: Record<string, unknown> | unknown[] }): Record<string, unknown> {
  return o.notes && !Array.isArray(o.notes) ? o.notes : {};
}

/** The price a single-amount object (item, payment link) carries: India first, then INR, then the first row. */
export function primaryPrice(spec: ProductSpec): PriceSpec | null {
  return (
    spec.prices.find((p) => p.country === 'IN') ??
    spec.prices.find((p) => p.currency === 'INR') ??
    spec.prices[0] ??
    null
  );
}

/**
 * Billing cadence as Razorpay's period × interval; quarterly is monthly × 3, and a product without a tier bills
 * monthly.
 */
export function cadence(tier: Tier | null): { period: 'weekly' | 'monthly' | 'yearly'; interval: number } {
  switch (tier) {
    case 'weekly':
      return { period: 'weekly', interval: 1 };
    case 'quarterly':
      return { period: 'monthly', interval: 3 };
    case 'annual':
      return { period: 'yearly', interval: 1 };
    default:
      return { period: 'monthly', interval: 1 };
  }
}

export async function findItem(client: RazorpayClient, spec: ProductSpec): Promise<RzpItem | undefined> {
  const items = await client.listAll<RzpItem>('/v1/items');
  return (
    items.find((i) => notesOf(i).product_id === spec.product_id) ??
    items.find((i) => !notesOf(i).product_id && i.description === spec.sku)
  );
}

export async function upsertItem(client: RazorpayClient, spec: ProductSpec): Promise<{ external_id: string }> {
  const price = primaryPrice(spec);
  // Razorpay items must carry a price; until the product is priced it gets a nominal ₹1.
  const desired = {
    name: spec.name,
    description: spec.sku,
    amount: price?.amount_minor ?? 100,
    currency: price?.currency ?? 'INR',
  };
  const notes = { product_id: spec.product_id, sku: spec.sku, tenant_id: spec.tenant_id };
  const existing = await findItem(client, spec);
  if (!existing) {
    const created = await client.call<RzpItem>('POST', '/v1/items', { body: { ...desired, notes } });
    return { external_id: created.id };
  }
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(desired)) if (existing[k as keyof RzpItem] !== v) patch[k] = v;
  if (!existing.active) patch.active = true;
  const have = notesOf(existing);
  if (Object.entries(notes).some(([k, v]) => have[k] !== v)) patch.notes = { ...have, ...notes };
  if (Object.keys(patch).length)
    await client.call('PATCH', `/v1/items/${encodeURIComponent(existing.id)}`, { body: patch });
  return { external_id: existing.id };
}

export async function listCatalogue(client: RazorpayClient): Promise<RemoteProduct[]> {
  const [items, plans] = await Promise.all([
    client.listAll<RzpItem>('/v1/items'),
    client.listAll<RzpPlan>('/v1/plans'),
  ]);
  const out: RemoteProduct[] = items.map((i) => {
    const n = notesOf(i);
    return {
      external_id: i.id,
      sku: typeof n.sku === 'string' ? n.sku : null,
      name: i.name,
      active: i.active,
      product_id: typeof n.product_id === 'string' ? n.product_id : null,
    };
  });
  // A product that exists at Razorpay only as plans (its item deleted) is still on sale there.
  const seen = new Set(out.map((p) => p.product_id).filter(Boolean));
  for (const plan of plans) {
    const n = notesOf(plan);
    if (typeof n.product_id !== 'string' || seen.has(n.product_id)) continue;
    seen.add(n.product_id);
    out.push({
      external_id: plan.id,
      sku: typeof n.sku === 'string' ? n.sku : null,
      name: plan.item.name,
      active: plan.item.active !== false,
      product_id: n.product_id,
    });
  }
  return out;
}

/**
 * One plan per (country, currency) row at the tier's cadence. An existing plan with the
 * same notes, amount and cadence is reused; a changed price gets a new plan (Razorpay
 * plans cannot be edited), and the old one stays for the subscriptions already on it.
 */
export async function upsertPlans(
  client: RazorpayClient,
  spec: ProductSpec,
): Promise<{ priced_locales: number; price_ids: string[] }> {
  const { period, interval } = cadence(spec.tier);
  const mine = (await client.listAll<RzpPlan>('/v1/plans')).filter((p) => notesOf(p).product_id === spec.product_id);
  const price_ids: string[] = [];
  for (const row of spec.prices) {
    const match = mine
      .filter((p) => {
        const n = notesOf(p);
        return (
          n.country === row.country &&
          p.item.currency === row.currency &&
          p.item.amount === row.amount_minor &&
          p.period === period &&
          p.interval === interval
        );
      })
      .sort((a, b) => b.created_at - a.created_at)[0];
    if (match) {
      price_ids.push(match.id);
      continue;
    }
    const created = await client.call<RzpPlan>('POST', '/v1/plans', {
      body: {
        period,
        interval,
        item: {
          name: spec.name,
          amount: row.amount_minor,
          currency: row.currency,
          description: `${spec.sku} ${row.country}`,
        },
        notes: { product_id: spec.product_id, sku: spec.sku, country: row.country, tenant_id: spec.tenant_id },
      },
    });
    mine.push(created);
    price_ids.push(created.id);
  }
  return { priced_locales: price_ids.length, price_ids };
}
