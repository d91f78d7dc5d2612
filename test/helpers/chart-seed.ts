import { testDb } from './db';

type Status = 'trialing' | 'active' | 'past_due' | 'canceled' | 'refunded' | 'expired';

/** One subscription record and its history, for chart tests: moves oldest first, [ISO time, status, product id?]. */
export interface SeededSubscription {
  provider?: string;
  mode?: 'live' | 'test';
  appUserId?: string;
  country?: string | null;
  moves: [string, Status, string?][];
}

/**
 * Writes the record as a writer would (insert, then an update per move, so the triggers record
 * every status and product), then dates each recorded move at its given time: the triggers date
 * them now(), and a chart test needs a past.
 */
export async function seedSubscription(tenantId: string, s: SeededSubscription, firstProduct: string): Promise<string> {
  const db = testDb();
  const [first, ...rest] = s.moves;
  const [row] = await db('subscriptions')
    .insert({
      tenant_id: tenantId,
      provider: s.provider ?? 'psp_a',
      mode: s.mode ?? 'live',
      status: first[1],
      app_user_id: s.appUserId ?? null,
      country: s.country ?? null,
      external_id: `sub_${crypto.randomUUID()}`,
      product_id: first[2] ?? firstProduct,
      created_at: first[0],
    })
    .returning('id');
  await db('subscription_changes').where({ subscription_id: row.id }).update({ changed_at: first[0] });
  await db('subscription_product_changes').where({ subscription_id: row.id }).update({ changed_at: first[0] });
  let product = first[2] ?? firstProduct;
  for (const [at, status, productId] of rest) {
    const before = new Date(Date.now() - 1000).toISOString();
    await db('subscriptions')
      .where({ id: row.id })
      .update({ status, product_id: productId ?? product });
    product = productId ?? product;
    // The rows just written are the only ones dated after `before`... and not yet re-dated.
    for (const table of ['subscription_changes', 'subscription_product_changes'])
      await db(table).where({ subscription_id: row.id }).where('changed_at', '>', before).update({ changed_at: at });
  }
  return row.id;
}
