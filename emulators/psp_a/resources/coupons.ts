import { invalidParam, missingParam, noSuch, StripeApiError } from '../errors';
import { newCouponId, newId, nowSeconds, randomBase62 } from '../ids';
import { expandList, listEnvelope } from '../list';
import { allowOnly, applyMetadata, arr, bool, currency, int, num, obj, oneOf, str } from '../params';
import type { Renderers } from '../render';
import type { Scope, StripeObject } from '../repo';
import { route, type ApiDeps, type ApiRequest, type Route } from '../router';

const COUPON_CREATE = [
  'id',
  'amount_off',
  'applies_to',
  'currency',
  'currency_options',
  'duration',
  'duration_in_months',
  'expand',
  'max_redemptions',
  'metadata',
  'name',
  'percent_off',
  'redeem_by',
];
const COUPON_UPDATE = ['currency_options', 'expand', 'metadata', 'name'];
const PROMO_CREATE = [
  'promotion',
  'active',
  'code',
  'customer',
  'customer_account',
  'expand',
  'expires_at',
  'max_redemptions',
  'metadata',
  'restrictions',
];
const PROMO_UPDATE = ['active', 'expand', 'metadata', 'restrictions'];

export function couponRoutes({ repo }: ApiDeps, renderers: Renderers): Route[] {
  const showCoupon = (o: StripeObject, req: ApiRequest) =>
    renderers.coupons(o, expandList(req.method === 'GET' ? req.query : req.body));
  const showPromo = (o: StripeObject, req: ApiRequest) =>
    renderers.promotion_codes(o, expandList(req.method === 'GET' ? req.query : req.body));
  const loadCoupon = (req: ApiRequest) => {
    const c = repo.getScoped('coupons', req.params.id, req.scope);
    if (!c) throw noSuch('coupon', req.params.id);
    return c;
  };
  const loadPromo = (req: ApiRequest) => {
    const p = repo.getScoped('promotion_codes', req.params.id, req.scope);
    if (!p) throw noSuch('promotion code', req.params.id);
    return p;
  };

  const createCoupon = (req: ApiRequest) => {
    const b = req.body;
    allowOnly(b, COUPON_CREATE);
    const id = str(b, 'id');
    if (id !== undefined && repo.getScoped('coupons', id, req.scope)) {
      throw new StripeApiError(400, 'invalid_request_error', 'Coupon already exists.', 'resource_already_exists', 'id');
    }
    const percentOff = num(b, 'percent_off');
    const amountOff = int(b, 'amount_off', { min: 1 });
    if (percentOff === undefined && amountOff === undefined) throw missingParam('percent_off');
    if (percentOff !== undefined && amountOff !== undefined)
      throw invalidParam('percent_off', 'You may only specify one of these parameters: amount_off, percent_off.');
    if (percentOff !== undefined && (percentOff <= 0 || percentOff > 100))
      throw invalidParam(
        'percent_off',
        'percent_off must be greater than 0 and at most 100.',
        'parameter_invalid_decimal',
      );
    const cur = currency(b, 'currency');
    if (amountOff !== undefined && !cur) throw missingParam('currency');
    const duration = oneOf(b, 'duration', ['once', 'repeating', 'forever'] as const) ?? 'once';
    const months = int(b, 'duration_in_months', { min: 1, max: 1200 });
    if (duration === 'repeating' && months === undefined) throw missingParam('duration_in_months');
    if (duration !== 'repeating' && months !== undefined)
      throw invalidParam('duration_in_months', 'duration_in_months can only be set when duration is repeating.');
    const appliesTo = obj(b, 'applies_to');
    let products: string[] | undefined;
    if (appliesTo) {
      allowOnly(appliesTo, ['products']);
      products = (arr(appliesTo, 'products', 'applies_to[products]') ?? []).map(String);
      for (const p of products)
        if (!repo.getScoped('products', p, req.scope)) throw noSuch('product', p, 'applies_to[products]');
    }
    const coupon: StripeObject = {
      id: id || newCouponId(),
      object: 'coupon',
      amount_off: amountOff ?? null,
      created: nowSeconds(),
      currency: amountOff !== undefined ? cur : null,
      duration,
      duration_in_months: months ?? null,
      livemode: req.scope.livemode,
      max_redemptions: int(b, 'max_redemptions', { min: 1 }) ?? null,
      metadata: applyMetadata({}, b),
      name: str(b, 'name') || null,
      percent_off: percentOff ?? null,
      redeem_by: int(b, 'redeem_by') ?? null,
      times_redeemed: 0,
      valid: true,
      _account: req.scope.account,
      ...(products ? { _applies_to: { products } } : {}),
    };
    repo.insert('coupons', coupon);
    return showCoupon(coupon, req);
  };

  const updateCoupon = (req: ApiRequest) => {
    allowOnly(req.body, COUPON_UPDATE);
    const c = loadCoupon(req);
    const name = str(req.body, 'name');
    if (name !== undefined) c.name = name || null;
    c.metadata = applyMetadata((c.metadata as Record<string, string>) ?? {}, req.body);
    repo.touch();
    return showCoupon(c, req);
  };

  const deleteCoupon = (req: ApiRequest) => {
    const c = loadCoupon(req);
    repo.remove('coupons', c);
    return { id: c.id, object: 'coupon', deleted: true };
  };

  /** Stripe keeps active codes unique per account, regardless of case. */
  const assertCodeFree = (scope: Scope, code: string, self?: StripeObject) => {
    const taken = repo.listScoped(
      'promotion_codes',
      scope,
      (p) => p !== self && p.active === true && String(p.code).toLowerCase() === code.toLowerCase(),
    );
    if (taken.length)
      throw invalidParam(
        'code',
        `An active promotion code with \`code: ${code}\` already exists.`,
        'resource_already_exists',
      );
  };

  const createPromo = (req: ApiRequest) => {
    const b = req.body;
    allowOnly(b, PROMO_CREATE);
    const promotion = obj(b, 'promotion');
    if (!promotion) throw missingParam('promotion');
    allowOnly(promotion, ['coupon', 'type']);
    oneOf(promotion, 'type', ['coupon'] as const, true, 'promotion[type]');
    const couponId = str(promotion, 'coupon');
    if (!couponId) throw missingParam('promotion[coupon]');
    const coupon = repo.getScoped('coupons', couponId, req.scope);
    if (!coupon) throw noSuch('coupon', couponId, 'promotion[coupon]');
    const code = str(b, 'code') || randomBase62(8).toUpperCase();
    if (!/^[A-Za-z0-9-]{1,500}$/.test(code))
      throw invalidParam(
        'code',
        'Promotion codes may only contain letters, digits and dashes.',
        'parameter_invalid_string',
      );
    const active = bool(b, 'active') ?? true;
    if (active) assertCodeFree(req.scope, code);
    const promo: StripeObject = {
      id: newId('promo', 24),
      object: 'promotion_code',
      active,
      code,
      created: nowSeconds(),
      customer: str(b, 'customer') ?? null,
      customer_account: null,
      expires_at: int(b, 'expires_at') ?? null,
      livemode: req.scope.livemode,
      max_redemptions: int(b, 'max_redemptions', { min: 1 }) ?? null,
      metadata: applyMetadata({}, b),
      promotion: { coupon: couponId, type: 'coupon' },
      restrictions: {
        currency_options: {},
        first_time_transaction: false,
        minimum_amount: null,
        minimum_amount_currency: null,
      },
      times_redeemed: 0,
      _account: req.scope.account,
    };
    repo.insert('promotion_codes', promo);
    return showPromo(promo, req);
  };

  const updatePromo = (req: ApiRequest) => {
    allowOnly(req.body, PROMO_UPDATE);
    const p = loadPromo(req);
    const active = bool(req.body, 'active');
    if (active === true && !p.active) assertCodeFree(req.scope, String(p.code), p);
    if (active !== undefined) p.active = active;
    p.metadata = applyMetadata((p.metadata as Record<string, string>) ?? {}, req.body);
    repo.touch();
    return showPromo(p, req);
  };

  const listCoupons = (req: ApiRequest) =>
    listEnvelope(req.query, '/v1/coupons', repo.listScoped('coupons', req.scope), renderers.coupons, 'coupon');

  const listPromos = (req: ApiRequest) => {
    const q = req.query;
    const active = bool(q, 'active');
    const code = str(q, 'code')?.toLowerCase();
    const coupon = str(q, 'coupon');
    const customer = str(q, 'customer');
    const items = repo.listScoped(
      'promotion_codes',
      req.scope,
      (p) =>
        (active === undefined || p.active === active) &&
        (!code || String(p.code).toLowerCase() === code) &&
        (!coupon || (p.promotion as { coupon: string }).coupon === coupon) &&
        (!customer || p.customer === customer),
    );
    return listEnvelope(q, '/v1/promotion_codes', items, renderers.promotion_codes, 'promotion code');
  };

  return [
    route('GET', '/v1/coupons', listCoupons),
    route('POST', '/v1/coupons', createCoupon),
    route('GET', '/v1/coupons/:id', (req) => showCoupon(loadCoupon(req), req)),
    route('POST', '/v1/coupons/:id', updateCoupon),
    route('DELETE', '/v1/coupons/:id', deleteCoupon),
    route('GET', '/v1/promotion_codes', listPromos),
    route('POST', '/v1/promotion_codes', createPromo),
    route('GET', '/v1/promotion_codes/:id', (req) => showPromo(loadPromo(req), req)),
    route('POST', '/v1/promotion_codes/:id', updatePromo),
  ];
}
