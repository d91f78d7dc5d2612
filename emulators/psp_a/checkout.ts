import type { createEvents } from './events';
import { linkForSku, priceForSku } from './catalog';
import { buildPurchase } from './objects';
import type { Repo, Scope } from './repo';
import type { Renderers } from './render';

import type { CheckoutParams } from '../common/types';

/**
 * POST /__control/checkout: a customer completes the hosted checkout of the SKU's payment
 * link. Customer, subscription, invoice, payment intent and charge are stored, then
 * payment_intent.succeeded, customer.subscription.created and invoice.payment_succeeded
 * are sent to `target` in that order, each signed like Stripe signs them.
 */
export function createCheckout(deps: { repo: Repo; renderers: Renderers; events: ReturnType<typeof createEvents> }) {
  const { repo, renderers, events } = deps;
  return async (params: CheckoutParams) => {
    if (typeof params.sku !== 'string' || typeof params.email !== 'string' || typeof params.target !== 'string') {
      throw Object.assign(new Error('sku, email and target are required strings'), { status: 400 });
    }
    const account = events.resolveAccount(params.account);
    const scope: Scope = { account: account.id, livemode: params.mode === 'live' };
    const link = linkForSku(repo, scope, params.sku);
    const linkTrial =
      (link?.subscription_data as { trial_period_days?: number | null } | null)?.trial_period_days ?? undefined;
    const trialDays =
      typeof params.trial_days === 'number' && params.trial_days > 0
        ? params.trial_days
        : params.trial_days === 0
          ? undefined
          : linkTrial;
    const metadata: Record<string, string> = {
      ...((link?.subscription_data as { metadata?: Record<string, string> } | null)?.metadata ?? {}),
      sku: params.sku,
      email: params.email,
      ...(params.app_user_id ? { app_user_id: params.app_user_id } : {}),
    };
    const purchase = buildPurchase({
      scope,
      email: params.email,
      price: priceForSku(repo, renderers, scope, params.sku),
      trialDays,
      metadata,
      ...(typeof params.country === 'string' && /^[A-Za-z]{2}$/.test(params.country)
        ? { country: params.country.toUpperCase() }
        : {}),
    });
    for (const [kind, obj] of [
      ['customers', purchase.customer],
      ['subscriptions', purchase.subscription],
      ['invoices', purchase.invoice],
      ['payment_intents', purchase.paymentIntent],
      ['charges', purchase.charge],
    ] as const) {
      repo.insert(kind, obj);
    }
    const sent: { id: string; type: string; status: number }[] = [];
    for (const [type, kind, obj] of [
      ['payment_intent.succeeded', 'payment_intents', purchase.paymentIntent],
      ['customer.subscription.created', 'subscriptions', purchase.subscription],
      ['invoice.payment_succeeded', 'invoices', purchase.invoice],
    ] as const) {
      const event = events.record(scope, type, renderers[kind](obj, []));
      sent.push({ id: event.id, type, status: await events.send(event, params.target) });
    }
    return { subscription_id: purchase.subscription.id, customer_id: purchase.customer.id, events: sent };
  };
}
