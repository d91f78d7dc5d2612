import { invalidParam, missingParam, noSuch } from '../errors';
import type { FormObject } from '../form';
import { newId, nowSeconds } from '../ids';
import { expandList, listEnvelope } from '../list';
import { allowOnly, applyMetadata, arr, bool, CURRENCIES, currency, int, obj, oneOf, str } from '../params';
import type { Renderers } from '../render';
import type { Repo, Scope, StripeObject } from '../repo';
import { route, type ApiDeps, type ApiRequest, type Route } from '../router';

const CREATE = [
  'active',
  'billing_scheme',
  'currency',
  'currency_options',
  'custom_unit_amount',
  'expand',
  'lookup_key',
  'metadata',
  'nickname',
  'product',
  'product_data',
  'recurring',
  'tax_behavior',
  'tiers',
  'tiers_mode',
  'transfer_lookup_key',
  'transform_quantity',
  'unit_amount',
  'unit_amount_decimal',
];
const UPDATE = [
  'active',
  'currency_options',
  'expand',
  'lookup_key',
  'metadata',
  'nickname',
  'tax_behavior',
  'transfer_lookup_key',
];
const TAX_BEHAVIORS = ['exclusive', 'inclusive', 'unspecified'] as const;
const INTERVALS = ['day', 'week', 'month', 'year'] as const;
/** Stripe caps recurring intervals at three years. */
const MAX_COUNT: Record<(typeof INTERVALS)[number], number> = { day: 1095, week: 156, month: 36, year: 3 };

interface CurrencyOption {
  custom_unit_amount: null;
  tax_behavior: string;
  unit_amount: number;
  unit_amount_decimal: string;
}

/** `name` as Stripe names the parameter in errors, e.g. `currency_options[eur][unit_amount]`. */
type ParamName = (name: string) => string;

function amountOf(body: FormObject, p: ParamName): number {
  const amount = int(body, 'unit_amount', { min: 0, max: 99999999, param: p('unit_amount') });
  if (amount !== undefined) return amount;
  const dec = str(body, 'unit_amount_decimal');
  if (dec !== undefined) {
    if (!/^\d+(\.\d{1,12})?$/.test(dec))
      throw invalidParam(p('unit_amount_decimal'), `Invalid decimal: ${dec}`, 'parameter_invalid_decimal');
    return Math.round(Number(dec));
  }
  throw missingParam(p('unit_amount'));
}

function currencyOptions(
  raw: FormObject,
  defaultCurrency: string,
  taxBehavior: string,
): Record<string, CurrencyOption> {
  const out: Record<string, CurrencyOption> = {};
  for (const [cur, value] of Object.entries(raw)) {
    const lower = cur.toLowerCase();
    const param = `currency_options[${cur}]`;
    if (!CURRENCIES.has(lower)) throw invalidParam(param, `Invalid currency: ${cur}.`, 'parameter_invalid_string');
    if (lower === defaultCurrency)
      throw invalidParam(
        param,
        `currency_options cannot include the price's own currency (${defaultCurrency}).`,
        'parameter_invalid_string',
      );
    if (typeof value !== 'object' || Array.isArray(value))
      throw invalidParam(param, 'Invalid hash', 'parameter_invalid_hash');
    allowOnly(value, ['custom_unit_amount', 'tax_behavior', 'tiers', 'unit_amount', 'unit_amount_decimal']);
    const amount = amountOf(value, (n) => `${param}[${n}]`);
    out[lower] = {
      custom_unit_amount: null,
      tax_behavior: oneOf(value, 'tax_behavior', TAX_BEHAVIORS, false, `${param}[tax_behavior]`) ?? taxBehavior,
      unit_amount: amount,
      unit_amount_decimal: String(amount),
    };
  }
  return out;
}

/** Lookup keys are unique among an account's prices; `transfer_lookup_key` moves one over. */
function claimLookupKey(repo: Repo, scope: Scope, key: string, transfer: boolean, self?: StripeObject): void {
  const holder = repo.listScoped('prices', scope, (p) => p.lookup_key === key && p !== self)[0];
  if (!holder) return;
  if (!transfer) {
    throw invalidParam(
      'lookup_key',
      `A price (\`${holder.id}\`) already uses that lookup key.`,
      'lookup_key_already_exists',
    );
  }
  holder.lookup_key = null;
}

/** Create a price; also used by `default_price_data` on product create (product not yet stored). */
export function createPrice(
  repo: Repo,
  scope: Scope,
  b: FormObject,
  productHint?: StripeObject,
  paramPrefix = '',
): StripeObject {
  const p = (name: string) => (paramPrefix ? `${paramPrefix}[${name}]` : name);
  const cur = currency(b, 'currency', true, p('currency'))!;
  let productId = str(b, 'product');
  const productData = obj(b, 'product_data');
  if (!productId && !productData) throw missingParam(p('product'));
  if (productId && !productHint && !repo.getScoped('products', productId, scope))
    throw noSuch('product', productId, p('product'));
  if (productData) {
    const now = nowSeconds();
    const prod: StripeObject = {
      id: newId('prod', 14),
      object: 'product',
      active: bool(productData, 'active') ?? true,
      created: now,
      default_price: null,
      description: null,
      images: [],
      livemode: scope.livemode,
      marketing_features: [],
      metadata: applyMetadata({}, productData),
      name: str(productData, 'name', true)!,
      package_dimensions: null,
      shippable: null,
      statement_descriptor: null,
      tax_code: null,
      type: 'service',
      unit_label: null,
      updated: now,
      url: null,
      _account: scope.account,
    };
    repo.insert('products', prod);
    productId = prod.id;
  }
  const billingScheme = oneOf(b, 'billing_scheme', ['per_unit', 'tiered'] as const) ?? 'per_unit';
  if (billingScheme === 'tiered')
    throw invalidParam(p('billing_scheme'), 'Tiered prices are not supported by this emulator.');
  const amount = amountOf(b, p);
  const taxBehavior = oneOf(b, 'tax_behavior', TAX_BEHAVIORS, false, p('tax_behavior')) ?? 'unspecified';
  let recurring: Record<string, unknown> | null = null;
  const rec = obj(b, 'recurring', p('recurring'));
  if (rec) {
    allowOnly(rec, ['interval', 'interval_count', 'meter', 'usage_type', 'trial_period_days']);
    const interval = oneOf(rec, 'interval', INTERVALS, true, `${p('recurring')}[interval]`)!;
    const count =
      int(rec, 'interval_count', { min: 1, max: MAX_COUNT[interval], param: `${p('recurring')}[interval_count]` }) ?? 1;
    const usage = oneOf(rec, 'usage_type', ['licensed', 'metered'] as const) ?? 'licensed';
    if (usage === 'metered')
      throw invalidParam(
        `${p('recurring')}[usage_type]`,
        'Metered prices require a meter; not supported by this emulator.',
      );
    recurring = {
      interval,
      interval_count: count,
      meter: null,
      trial_period_days: int(rec, 'trial_period_days', { min: 1, max: 730 }) ?? null,
      usage_type: usage,
    };
  }
  const opts = obj(b, 'currency_options', p('currency_options'));
  const options: Record<string, CurrencyOption> = {
    [cur]: {
      custom_unit_amount: null,
      tax_behavior: taxBehavior,
      unit_amount: amount,
      unit_amount_decimal: String(amount),
    },
    ...(opts ? currencyOptions(opts, cur, taxBehavior) : {}),
  };
  const lookupKey = str(b, 'lookup_key');
  if (lookupKey) claimLookupKey(repo, scope, lookupKey, bool(b, 'transfer_lookup_key') ?? false);
  const price: StripeObject = {
    id: newId('price', 24),
    object: 'price',
    active: bool(b, 'active') ?? true,
    billing_scheme: billingScheme,
    created: nowSeconds(),
    currency: cur,
    custom_unit_amount: null,
    livemode: scope.livemode,
    lookup_key: lookupKey || null,
    metadata: applyMetadata({}, b),
    nickname: str(b, 'nickname') || null,
    product: productId,
    recurring,
    tax_behavior: taxBehavior,
    tiers_mode: null,
    transform_quantity: null,
    type: recurring ? 'recurring' : 'one_time',
    unit_amount: amount,
    unit_amount_decimal: String(amount),
    _account: scope.account,
    _currency_options: options,
  };
  return repo.insert('prices', price);
}

export function priceRoutes({ repo }: ApiDeps, renderers: Renderers): Route[] {
  const show = (o: StripeObject, req: ApiRequest) =>
    renderers.prices(o, expandList(req.method === 'GET' ? req.query : req.body));
  const load = (req: ApiRequest) => {
    const p = repo.getScoped('prices', req.params.id, req.scope);
    if (!p) throw noSuch('price', req.params.id);
    return p;
  };

  const create = (req: ApiRequest) => {
    allowOnly(req.body, CREATE);
    return show(createPrice(repo, req.scope, req.body), req);
  };

  const update = (req: ApiRequest) => {
    const b = req.body;
    allowOnly(b, UPDATE);
    const price = load(req);
    const active = bool(b, 'active');
    if (active !== undefined) price.active = active;
    const nickname = str(b, 'nickname');
    if (nickname !== undefined) price.nickname = nickname || null;
    const lookupKey = str(b, 'lookup_key');
    if (lookupKey !== undefined) {
      if (lookupKey) claimLookupKey(repo, req.scope, lookupKey, bool(b, 'transfer_lookup_key') ?? false, price);
      price.lookup_key = lookupKey || null;
    }
    const tax = oneOf(b, 'tax_behavior', TAX_BEHAVIORS);
    if (tax !== undefined) {
      if (price.tax_behavior !== 'unspecified' && tax !== price.tax_behavior) {
        throw invalidParam('tax_behavior', 'tax_behavior cannot be changed once it is set to inclusive or exclusive.');
      }
      price.tax_behavior = tax;
    }
    const opts = obj(b, 'currency_options');
    if (opts) {
      // Amounts of the price's own currency are immutable; other currencies may be set or replaced.
      const merged = { ...(price._currency_options as Record<string, CurrencyOption>) };
      Object.assign(merged, currencyOptions(opts, String(price.currency), String(price.tax_behavior)));
      price._currency_options = merged;
    }
    price.metadata = applyMetadata(price.metadata as Record<string, string>, b);
    repo.touch();
    return show(price, req);
  };

  const list = (req: ApiRequest) => {
    const q = req.query;
    const active = bool(q, 'active');
    const product = str(q, 'product');
    const cur = currency(q, 'currency');
    const type = oneOf(q, 'type', ['one_time', 'recurring'] as const);
    const lookupKeys = arr(q, 'lookup_keys')?.map(String);
    const rec = obj(q, 'recurring');
    const interval = rec ? str(rec, 'interval') : undefined;
    const items = repo.listScoped(
      'prices',
      req.scope,
      (p) =>
        (active === undefined || p.active === active) &&
        (!product || p.product === product) &&
        (!cur || p.currency === cur) &&
        (!type || p.type === type) &&
        (!lookupKeys || lookupKeys.includes(String(p.lookup_key))) &&
        (!interval || (p.recurring as { interval?: string } | null)?.interval === interval),
    );
    return listEnvelope(q, '/v1/prices', items, renderers.prices, 'price');
  };

  return [
    route('GET', '/v1/prices', list),
    route('POST', '/v1/prices', create),
    route('GET', '/v1/prices/:id', (req) => show(load(req), req)),
    route('POST', '/v1/prices/:id', update),
  ];
}
