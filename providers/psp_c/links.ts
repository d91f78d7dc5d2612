import crypto from 'node:crypto';
import { ProviderRejectedError } from '../errors';
import type { Mode, PaymentLinkResult, ProductSpec } from '../types';
import { fieldOf, PROVIDER, type RazorpayClient } from './client';
import { notesOf, primaryPrice } from './catalogue';

/**
 * The app-scoped purchase entry point at Razorpay is a Payment Link (POST
 * /v1/payment_links). A subscription link is a subscription for one customer, so it is
 * no fit for a link an app hands to everyone; the recurring prices are the plans.
 *
 * Razorpay refuses a second link with the same `reference_id`, which is our idempotency:
 * the reference is derived from (app, product, mode, amount, currency), so a retry finds
 * the link the first attempt made, and a new price gets a new link. A Razorpay link takes
 * one payment; once paid (or cancelled or expired) the next generation `<ref>-<n>` is made.
 */
interface RzpLink {
  id: string;
  status: string;
  short_url: string;
  reference_id: string;
  notes?: Record<string, unknown> | unknown[];
}

const MAX_GENERATIONS = 50;

export function referenceFor(appId: string, productId: string, mode: Mode, currency: string, amount: number): string {
  // reference_id may hold at most 40 characters.
  return `bsl_${crypto.createHash('sha256').update(`${appId}|${productId}|${mode}|${currency}|${amount}`).digest('hex').slice(0, 28)}`;
}

async function byReference(client: RazorpayClient, ref: string): Promise<RzpLink | undefined> {
  const res = await client.call<{ payment_links?: RzpLink[] }>('GET', '/v1/payment_links', {
    query: { reference_id: ref },
  });
  return (res.payment_links ?? []).find((l) => l.reference_id === ref);
}

export async function ensureLink(
  client: RazorpayClient,
  mode: Mode,
  spec: ProductSpec,
  appId: string,
): Promise<PaymentLinkResult> {
  const price = primaryPrice(spec);
  if (!price)
    throw new ProviderRejectedError(PROVIDER, `product ${spec.sku} has no price to put on a payment link`, {
      code: 'no_price',
    });
  const base = referenceFor(appId, spec.product_id, mode, price.currency, price.amount_minor);
  for (let gen = 0; gen < MAX_GENERATIONS; gen++) {
    const ref = gen === 0 ? base : `${base}-${gen}`;
    let link = await byReference(client, ref);
    if (!link) {
      try {
        link = await client.call<RzpLink>('POST', '/v1/payment_links', {
          body: {
            amount: price.amount_minor,
            currency: price.currency,
            description: spec.name,
            reference_id: ref,
            notes: { app_id: appId, product_id: spec.product_id, sku: spec.sku },
            notify: { sms: false, email: false },
            reminder_enable: false,
          },
        });
      } catch (err) {
        // Another attempt created it between our look-up and our create.
        if (fieldOf(err) !== 'reference_id') throw err;
        link = await byReference(client, ref);
        if (!link) throw err;
      }
    }
    if (link.status === 'created') return { kind: 'payment_link', external_id: link.id, url: link.short_url };
  }
  throw new ProviderRejectedError(PROVIDER, `every payment link generation for ${spec.sku} is used up`, {
    code: 'links_exhausted',
  });
}

/** Cancel the product's open links (stop sales); paid or cancelled ones are left as they are. */
export async function cancelLinks(client: RazorpayClient, productId: string): Promise<number> {
  const links = await client.listAll<RzpLink>('/v1/payment_links', {}, (p) => p.payment_links);
  let n = 0;
  for (const l of links) {
    if (notesOf(l).product_id !== productId || l.status !== 'created') continue;
    await client.call('POST', `/v1/payment_links/${encodeURIComponent(l.id)}/cancel`);
    n++;
  }
  return n;
}
