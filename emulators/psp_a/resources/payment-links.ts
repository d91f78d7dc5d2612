import { invalidParam, missingParam, noSuch } from '../errors';
import type { FormObject } from '../form';
import { newId, randomBase62 } from '../ids';
import { expandList, listEnvelope } from '../list';
import { allowOnly, applyMetadata, arr, bool, int, num, obj, str } from '../params';
import { lineItemList, type Renderers } from '../render';
import type { StripeObject } from '../repo';
import { route, type ApiDeps, type ApiRequest, type Route } from '../router';

const CREATE = [
  'line_items',
  'after_completion',
  'allow_promotion_codes',
  'application_fee_amount',
  'application_fee_percent',
  'automatic_tax',
  'billing_address_collection',
  'consent_collection',
  'currency',
  'custom_fields',
  'custom_text',
  'customer_creation',
  'expand',
  'inactive_message',
  'invoice_creation',
  'metadata',
  'name_collection',
  'on_behalf_of',
  'optional_items',
  'payment_intent_data',
  'payment_method_collection',
  'payment_method_types',
  'phone_number_collection',
  'restrictions',
  'shipping_address_collection',
  'shipping_options',
  'submit_type',
  'subscription_data',
  'tax_id_collection',
  'transfer_data',
];
const UPDATE = [
  'active',
  'after_completion',
  'allow_promotion_codes',
  'automatic_tax',
  'billing_address_collection',
  'custom_fields',
  'custom_text',
  'customer_creation',
  'expand',
  'inactive_message',
  'invoice_creation',
  'line_items',
  'metadata',
  'name_collection',
  'optional_items',
  'payment_intent_data',
  'payment_method_collection',
  'payment_method_types',
  'phone_number_collection',
  'restrictions',
  'shipping_address_collection',
  'submit_type',
  'subscription_data',
  'tax_id_collection',
];

interface LineItem {
  id: string;
  price: string;
  quantity: number;
}

function subscriptionData(raw: FormObject, current: Record<string, unknown> | null): Record<string, unknown> {
  allowOnly(raw, ['description', 'invoice_settings', 'metadata', 'trial_period_days', 'trial_settings']);
  const base = current ?? {
    description: null,
    invoice_settings: { issuer: { type: 'self' } },
    metadata: {},
    trial_period_days: null,
    trial_settings: null,
  };
  const trial =
    raw.trial_period_days === ''
      ? null
      : int(raw, 'trial_period_days', { min: 1, max: 730, param: 'subscription_data[trial_period_days]' });
  return {
    ...base,
    description: str(raw, 'description') ?? base.description,
    metadata: applyMetadata(base.metadata as Record<string, string>, raw),
    trial_period_days: trial === undefined ? base.trial_period_days : trial,
  };
}

function paymentIntentData(raw: FormObject): Record<string, unknown> {
  allowOnly(raw, [
    'capture_method',
    'description',
    'metadata',
    'setup_future_usage',
    'statement_descriptor',
    'statement_descriptor_suffix',
    'transfer_group',
  ]);
  return {
    capture_method: str(raw, 'capture_method') ?? null,
    description: str(raw, 'description') ?? null,
    metadata: applyMetadata({}, raw),
    setup_future_usage: str(raw, 'setup_future_usage') ?? null,
    statement_descriptor: str(raw, 'statement_descriptor') ?? null,
    statement_descriptor_suffix: str(raw, 'statement_descriptor_suffix') ?? null,
    transfer_group: str(raw, 'transfer_group') ?? null,
  };
}

export function paymentLinkRoutes({ repo, publicUrl }: ApiDeps, renderers: Renderers): Route[] {
  const show = (o: StripeObject, req: ApiRequest) =>
    renderers.payment_links(o, expandList(req.method === 'GET' ? req.query : req.body));
  const load = (req: ApiRequest) => {
    const link = repo.getScoped('payment_links', req.params.id, req.scope);
    if (!link) throw noSuch('payment link', req.params.id);
    return link;
  };

  const create = (req: ApiRequest) => {
    const b = req.body;
    allowOnly(b, CREATE);
    const rawItems = arr(b, 'line_items');
    if (!rawItems || rawItems.length === 0) throw missingParam('line_items');
    if (rawItems.length > 20) throw invalidParam('line_items', 'You may only specify up to 20 line items.');
    const items: LineItem[] = [];
    const prices: StripeObject[] = [];
    rawItems.forEach((raw, i) => {
      const param = `line_items[${i}]`;
      if (typeof raw !== 'object' || Array.isArray(raw))
        throw invalidParam(param, 'Invalid hash', 'parameter_invalid_hash');
      allowOnly(raw, ['price', 'quantity', 'adjustable_quantity']);
      const priceId = str(raw, 'price');
      if (!priceId) throw missingParam(`${param}[price]`);
      const quantity = int(raw, 'quantity', { required: true, min: 1, max: 999999, param: `${param}[quantity]` })!;
      const price = repo.getScoped('prices', priceId, req.scope);
      if (!price) throw noSuch('price', priceId, `${param}[price]`);
      if (!price.active)
        throw invalidParam(`${param}[price]`, `The price \`${priceId}\` is not active. Please use an active price.`);
      items.push({ id: newId('li', 24), price: priceId, quantity });
      prices.push(price);
    });
    const recurring = prices.filter((p) => p.type === 'recurring');
    const intervals = new Set(
      recurring.map((p) =>
        JSON.stringify([
          (p.recurring as Record<string, unknown>).interval,
          (p.recurring as Record<string, unknown>).interval_count,
        ]),
      ),
    );
    if (intervals.size > 1)
      throw invalidParam('line_items', 'All recurring prices must have the same billing interval.');
    const currencies = new Set(prices.map((p) => p.currency));
    if (currencies.size > 1) throw invalidParam('line_items', 'All prices must use the same currency.');
    const subData = obj(b, 'subscription_data');
    if (subData && recurring.length === 0)
      throw invalidParam(
        'subscription_data',
        'You can only pass `subscription_data` when the payment link includes a recurring price.',
      );
    const piData = obj(b, 'payment_intent_data');
    if (piData && recurring.length > 0)
      throw invalidParam(
        'payment_intent_data',
        'You cannot pass `payment_intent_data` for payment links in subscription mode.',
      );
    const code = randomBase62(14);
    const link: StripeObject = {
      id: newId('plink', 24),
      object: 'payment_link',
      active: true,
      after_completion: { hosted_confirmation: { custom_message: null }, type: 'hosted_confirmation' },
      allow_promotion_codes: bool(b, 'allow_promotion_codes') ?? false,
      application: null,
      application_fee_amount: int(b, 'application_fee_amount', { min: 0 }) ?? null,
      application_fee_percent: num(b, 'application_fee_percent') ?? null,
      automatic_tax: { enabled: false, liability: null },
      billing_address_collection: str(b, 'billing_address_collection') ?? 'auto',
      consent_collection: null,
      currency: prices[0].currency,
      custom_fields: [],
      custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
      customer_creation: recurring.length ? 'always' : (str(b, 'customer_creation') ?? 'if_required'),
      inactive_message: str(b, 'inactive_message') ?? null,
      invoice_creation: recurring.length
        ? null
        : {
            enabled: false,
            invoice_data: {
              account_tax_ids: null,
              custom_fields: null,
              description: null,
              footer: null,
              issuer: null,
              metadata: {},
              rendering_options: null,
            },
          },
      livemode: req.scope.livemode,
      metadata: applyMetadata({}, b),
      on_behalf_of: null,
      payment_intent_data: piData ? paymentIntentData(piData) : null,
      payment_method_collection: str(b, 'payment_method_collection') ?? 'always',
      payment_method_types: null,
      phone_number_collection: { enabled: false },
      restrictions: null,
      shipping_address_collection: null,
      shipping_options: [],
      submit_type: str(b, 'submit_type') ?? 'auto',
      subscription_data: recurring.length ? subscriptionData(subData ?? {}, null) : null,
      tax_id_collection: { enabled: false, required: 'never' },
      transfer_data: null,
      url: `${publicUrl()}/b/${req.scope.livemode ? '' : 'test_'}${code}`,
      _account: req.scope.account,
      _line_items: items,
      _code: code,
    };
    repo.insert('payment_links', link);
    return show(link, req);
  };

  const update = (req: ApiRequest) => {
    const b = req.body;
    allowOnly(b, UPDATE);
    const link = load(req);
    const active = bool(b, 'active');
    if (active !== undefined) link.active = active;
    const promo = bool(b, 'allow_promotion_codes');
    if (promo !== undefined) link.allow_promotion_codes = promo;
    const inactive = str(b, 'inactive_message');
    if (inactive !== undefined) link.inactive_message = inactive || null;
    const subData = obj(b, 'subscription_data');
    if (subData) {
      if (!link.subscription_data)
        throw invalidParam('subscription_data', 'This payment link is not in subscription mode.');
      link.subscription_data = subscriptionData(subData, link.subscription_data as Record<string, unknown>);
    }
    const rawItems = arr(b, 'line_items');
    if (rawItems) {
      // Stripe lets an update change quantities of existing line items only.
      const items = link._line_items as LineItem[];
      rawItems.forEach((raw, i) => {
        if (typeof raw !== 'object' || Array.isArray(raw))
          throw invalidParam(`line_items[${i}]`, 'Invalid hash', 'parameter_invalid_hash');
        allowOnly(raw, ['id', 'quantity', 'adjustable_quantity']);
        const item = items.find((x) => x.id === raw.id);
        if (!item) throw noSuch('line item', String(raw.id), `line_items[${i}][id]`);
        item.quantity = int(raw, 'quantity', { min: 1, param: `line_items[${i}][quantity]` }) ?? item.quantity;
      });
    }
    link.metadata = applyMetadata(link.metadata as Record<string, string>, b);
    repo.touch();
    return show(link, req);
  };

  const list = (req: ApiRequest) => {
    const active = bool(req.query, 'active');
    const items = repo.listScoped('payment_links', req.scope, (l) => active === undefined || l.active === active);
    return listEnvelope(req.query, '/v1/payment_links', items, renderers.payment_links, 'payment link');
  };

  const lineItems = (req: ApiRequest) => {
    const link = load(req);
    const all = lineItemList(repo, link, renderers);
    // Line items paginate like any list; reuse the envelope over the rendered items.
    const stored = (link._line_items as LineItem[]).map((i) => ({ id: i.id }) as StripeObject);
    return listEnvelope(req.query, all.url, stored, (o) => all.data.find((d) => d.id === o.id)!, 'line item');
  };

  return [
    route('GET', '/v1/payment_links', list),
    route('POST', '/v1/payment_links', create),
    route('GET', '/v1/payment_links/:id', (req) => show(load(req), req)),
    route('POST', '/v1/payment_links/:id', update),
    route('GET', '/v1/payment_links/:id/line_items', lineItems),
  ];
}
