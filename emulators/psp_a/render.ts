import { applyExpand, type Renderer } from './list';
import { render, type Repo, type Scope, type StripeObject } from './repo';

export type Renderers = Record<string, Renderer>;

export function scopeOf(o: StripeObject): Scope {
  return { account: String(o._account), livemode: o.livemode === true };
}

function lineItem(
  repo: Repo,
  scope: Scope,
  item: { id: string; price: string; quantity: number },
  renderers: Renderers,
) {
  const price = repo.getScoped('prices', item.price, scope);
  const product = price ? repo.getScoped('products', String(price.product), scope) : undefined;
  const unit = Number(price?.unit_amount ?? 0);
  return {
    id: item.id,
    object: 'item',
    amount_discount: 0,
    amount_subtotal: unit * item.quantity,
    amount_tax: 0,
    amount_total: unit * item.quantity,
    currency: price?.currency ?? 'usd',
    description: product?.name ?? null,
    price: price ? renderers.prices(price, []) : item.price,
    quantity: item.quantity,
  };
}

export function lineItemList(repo: Repo, link: StripeObject, renderers: Renderers) {
  const items = (link._line_items as { id: string; price: string; quantity: number }[]) ?? [];
  return {
    object: 'list',
    data: items.map((i) => lineItem(repo, scopeOf(link), i, renderers)),
    has_more: false,
    url: `/v1/payment_links/${link.id}/line_items`,
  };
}

/**
 * How each kind is shown: bookkeeping stripped, includable fields (`currency_options`,
 * `line_items`, `applies_to`) only when expanded, foreign ids expanded on request.
 */
export function makeRenderers(repo: Repo): Renderers {
  const renderers: Renderers = {};
  const plain: Renderer = (o, expand) => applyExpand(render(o), expand, repo, scopeOf(o), renderers);
  for (const kind of [
    'products',
    'customers',
    'subscriptions',
    'invoices',
    'payment_intents',
    'charges',
    'events',
    'promotion_codes',
  ]) {
    renderers[kind] = plain;
  }
  renderers.prices = (o, expand) => {
    const out = render(o);
    if (expand.includes('currency_options')) out.currency_options = structuredClone(o._currency_options ?? {});
    return applyExpand(
      out,
      expand.filter((p) => p !== 'currency_options'),
      repo,
      scopeOf(o),
      renderers,
    );
  };
  renderers.payment_links = (o, expand) => {
    const out = render(o);
    if (expand.includes('line_items')) out.line_items = lineItemList(repo, o, renderers);
    return applyExpand(
      out,
      expand.filter((p) => p !== 'line_items'),
      repo,
      scopeOf(o),
      renderers,
    );
  };
  renderers.coupons = (o, expand) => {
    const out = render(o);
    if (expand.includes('applies_to') && o._applies_to) out.applies_to = structuredClone(o._applies_to);
    return out;
  };
  return renderers;
}
