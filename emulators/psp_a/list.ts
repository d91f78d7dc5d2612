import { invalidParam, noSuch } from './errors';
import type { FormObject } from './form';
import { arr, int } from './params';
import type { Repo, Scope, StripeObject } from './repo';

/** Which kind a foreign-key field points at, for `expand[]`. */
const FIELD_KINDS: Record<string, string> = {
  product: 'products',
  default_price: 'prices',
  price: 'prices',
  customer: 'customers',
  subscription: 'subscriptions',
  invoice: 'invoices',
  latest_invoice: 'invoices',
  payment_intent: 'payment_intents',
  latest_charge: 'charges',
  charge: 'charges',
  coupon: 'coupons',
  promotion_code: 'promotion_codes',
};

export type Renderer = (o: StripeObject, expand: string[]) => Record<string, unknown>;

export function expandList(source: FormObject): string[] {
  const raw = arr(source, 'expand') ?? [];
  return raw.filter((v): v is string => typeof v === 'string');
}

/** Paths that start at this object (`price.product`), for `expand[]` and includable fields. */
export function subPaths(expand: string[], field: string): string[] {
  const prefix = `${field}.`;
  return expand.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length));
}

/**
 * Replace id strings by objects along each expand path (Stripe allows four levels).
 * `renderers` gives the includable-field-aware rendering of each kind.
 */
export function applyExpand(
  out: Record<string, unknown>,
  expand: string[],
  repo: Repo,
  scope: Scope,
  renderers: Record<string, Renderer>,
): Record<string, unknown> {
  for (const path of expand) {
    const [head, ...rest] = path.split('.');
    const value = out[head];
    const kind = FIELD_KINDS[head];
    if (typeof value === 'string' && kind) {
      const target = repo.getScoped(kind, value, scope);
      if (target) {
        const renderer = renderers[kind];
        const nested = rest.length ? [rest.join('.')] : [];
        out[head] = renderer ? renderer(target, nested) : target;
      }
    } else if (value && typeof value === 'object' && !Array.isArray(value) && rest.length) {
      applyExpand(value as Record<string, unknown>, [rest.join('.')], repo, scope, renderers);
    }
  }
  return out;
}

/**
 * Stripe's list envelope `{object: 'list', data, has_more, url}`, newest first, with
 * `limit` (1–100, default 10), `starting_after` and `ending_before` cursors.
 */
export function listEnvelope(
  query: FormObject,
  url: string,
  items: StripeObject[],
  renderItem: (o: StripeObject, expand: string[]) => Record<string, unknown>,
  what: string,
): Record<string, unknown> {
  const limit = int(query, 'limit', { min: 1, max: 100 }) ?? 10;
  const startingAfter = typeof query.starting_after === 'string' ? query.starting_after : undefined;
  const endingBefore = typeof query.ending_before === 'string' ? query.ending_before : undefined;
  if (startingAfter && endingBefore) {
    throw invalidParam(
      'ending_before',
      'You may only specify one of these parameters: ending_before, starting_after.',
      'parameter_invalid_empty',
    );
  }
  let page: StripeObject[];
  let hasMore: boolean;
  if (startingAfter) {
    const i = items.findIndex((o) => o.id === startingAfter);
    if (i === -1) throw noSuch(what, startingAfter, 'starting_after');
    page = items.slice(i + 1, i + 1 + limit);
    hasMore = i + 1 + limit < items.length;
  } else if (endingBefore) {
    const i = items.findIndex((o) => o.id === endingBefore);
    if (i === -1) throw noSuch(what, endingBefore, 'ending_before');
    const start = Math.max(0, i - limit);
    page = items.slice(start, i);
    hasMore = start > 0;
  } else {
    page = items.slice(0, limit);
    hasMore = items.length > limit;
  }
  const nested = subPaths(expandList(query), 'data');
  return { object: 'list', data: page.map((o) => renderItem(o, nested)), has_more: hasMore, url };
}
