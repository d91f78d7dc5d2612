import { paddleId } from './ids';
import { PaddleError, listParam, sendEntity, sendList } from './respond';
import { getOwned, now, owned, type Route, type Stored } from './routes';
import { Checker, TAX_CATEGORIES } from './validate';

// Products, prices and discounts: the catalogue endpoints of the Paddle Billing API.

const STATUS = new Set(['active', 'archived']);
const DISCOUNT_STATUS = new Set(['active', 'archived']);
const DISCOUNT_TYPES = new Set(['flat', 'flat_per_seat', 'percentage']);
const TAX_MODES = new Set(['account_setting', 'external', 'internal']);
const CATALOG_TYPES = new Set(['standard', 'custom']);

function byStatus(items: Stored[], statuses: string[] | null, fallback: string[] | null): Stored[] {
  const wanted = statuses ?? fallback;
  return wanted ? items.filter((o) => wanted.includes(String(o.status))) : items;
}

function checkQuantity(c: Checker): void {
  const q = c.body.quantity;
  if (q === undefined) return;
  const ok =
    !!q &&
    typeof q === 'object' &&
    Number.isInteger((q as { minimum?: unknown }).minimum) &&
    Number.isInteger((q as { maximum?: unknown }).maximum);
  if (!ok) c.fail('quantity', 'must be an object with integer minimum and maximum');
}

function checkTrialNeedsCycle(c: Checker, existing?: Stored): void {
  const trial = c.body.trial_period !== undefined ? c.body.trial_period : existing?.trial_period;
  const cycle = c.body.billing_cycle !== undefined ? c.body.billing_cycle : existing?.billing_cycle;
  if (trial && !cycle) c.fail('trial_period', 'a trial period requires a billing cycle');
}

function apply(target: Stored, body: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(body)) target[k] = v;
  target.updated_at = now();
}

export const catalogRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/products$/,
    handler: ({ store, publicUrl }, { ctx, caller }) => {
      let items = byStatus(owned(store, 'products', caller), listParam(ctx, 'status'), ['active']);
      const ids = listParam(ctx, 'id');
      if (ids) items = items.filter((o) => ids.includes(o.id));
      sendList(ctx, publicUrl(), items);
    },
  },
  {
    method: 'POST',
    path: /^\/products$/,
    handler: ({ store }, { ctx, caller, body }) => {
      new Checker(body)
        .only(['name', 'tax_category', 'type', 'description', 'image_url', 'custom_data'])
        .string('name', { required: true, max: 200 })
        .oneOf('tax_category', TAX_CATEGORIES, { required: true })
        .oneOf('type', CATALOG_TYPES, { nullable: true })
        .string('description', { nullable: true, max: 2048 })
        .string('image_url', { nullable: true })
        .customData()
        .done();
      const product = store.insert('products', {
        id: paddleId('pro'),
        name: body.name,
        type: body.type ?? 'standard',
        tax_category: body.tax_category,
        description: body.description ?? null,
        image_url: body.image_url ?? null,
        custom_data: body.custom_data ?? null,
        status: 'active',
        import_meta: null,
        created_at: now(),
        updated_at: now(),
        _account: caller.account,
        _mode: caller.mode,
      });
      sendEntity(ctx, product, 201);
    },
  },
  {
    method: 'GET',
    path: /^\/products\/([^/]+)$/,
    handler: ({ store }, { ctx, caller, params }) => sendEntity(ctx, getOwned(store, 'products', caller, params[0])),
  },
  {
    method: 'PATCH',
    path: /^\/products\/([^/]+)$/,
    handler: ({ store }, { ctx, caller, params, body }) => {
      const product = getOwned(store, 'products', caller, params[0]);
      new Checker(body)
        .only(['name', 'description', 'type', 'tax_category', 'image_url', 'custom_data', 'status'])
        .string('name', { max: 200 })
        .oneOf('tax_category', TAX_CATEGORIES)
        .oneOf('type', CATALOG_TYPES, { nullable: true })
        .string('description', { nullable: true, max: 2048 })
        .string('image_url', { nullable: true })
        .oneOf('status', STATUS)
        .customData()
        .done();
      apply(product, body);
      store.save();
      sendEntity(ctx, product);
    },
  },
  {
    method: 'GET',
    path: /^\/prices$/,
    handler: ({ store, publicUrl }, { ctx, caller }) => {
      // Like products, Paddle lists only active prices unless a status filter asks for more.
      let items = byStatus(owned(store, 'prices', caller), listParam(ctx, 'status'), ['active']);
      const productIds = listParam(ctx, 'product_id');
      if (productIds) items = items.filter((o) => productIds.includes(String(o.product_id)));
      const ids = listParam(ctx, 'id');
      if (ids) items = items.filter((o) => ids.includes(o.id));
      const recurring = ctx.URL.searchParams.get('recurring');
      if (recurring !== null) items = items.filter((o) => (o.billing_cycle != null) === (recurring === 'true'));
      sendList(ctx, publicUrl(), items);
    },
  },
  {
    method: 'POST',
    path: /^\/prices$/,
    handler: ({ store }, { ctx, caller, body }) => {
      const c = new Checker(body)
        .only([
          'description',
          'name',
          'type',
          'product_id',
          'unit_price',
          'billing_cycle',
          'trial_period',
          'tax_mode',
          'unit_price_overrides',
          'quantity',
          'custom_data',
        ])
        .string('description', { required: true, max: 500 })
        .string('name', { nullable: true, max: 150 })
        .oneOf('type', CATALOG_TYPES, { nullable: true })
        .string('product_id', { required: true })
        .period('billing_cycle')
        .period('trial_period')
        .oneOf('tax_mode', TAX_MODES)
        .overrides()
        .customData();
      c.money('unit_price', body.unit_price);
      checkQuantity(c);
      checkTrialNeedsCycle(c);
      if (
        typeof body.product_id === 'string' &&
        !owned(store, 'products', caller).some((p) => p.id === body.product_id)
      ) {
        c.fail('product_id', `product ${body.product_id} not found`);
      }
      c.done();
      const price = store.insert('prices', {
        id: paddleId('pri'),
        product_id: body.product_id,
        type: body.type ?? 'standard',
        description: body.description,
        name: body.name ?? null,
        billing_cycle: body.billing_cycle ?? null,
        trial_period: body.trial_period ?? null,
        tax_mode: body.tax_mode ?? 'account_setting',
        unit_price: body.unit_price,
        unit_price_overrides: body.unit_price_overrides ?? [],
        quantity: body.quantity ?? { minimum: 1, maximum: 100 },
        status: 'active',
        custom_data: body.custom_data ?? null,
        import_meta: null,
        created_at: now(),
        updated_at: now(),
        _account: caller.account,
        _mode: caller.mode,
      });
      sendEntity(ctx, price, 201);
    },
  },
  {
    method: 'GET',
    path: /^\/prices\/([^/]+)$/,
    handler: ({ store }, { ctx, caller, params }) => sendEntity(ctx, getOwned(store, 'prices', caller, params[0])),
  },
  {
    method: 'PATCH',
    path: /^\/prices\/([^/]+)$/,
    handler: ({ store }, { ctx, caller, params, body }) => {
      const price = getOwned(store, 'prices', caller, params[0]);
      const c = new Checker(body)
        .only([
          'description',
          'name',
          'type',
          'billing_cycle',
          'trial_period',
          'tax_mode',
          'unit_price',
          'unit_price_overrides',
          'quantity',
          'status',
          'custom_data',
        ])
        .string('description', { max: 500 })
        .string('name', { nullable: true, max: 150 })
        .oneOf('type', CATALOG_TYPES, { nullable: true })
        .period('billing_cycle')
        .period('trial_period')
        .oneOf('tax_mode', TAX_MODES)
        .oneOf('status', STATUS)
        .overrides()
        .customData();
      c.money('unit_price', body.unit_price, false);
      checkQuantity(c);
      checkTrialNeedsCycle(c, price);
      c.done();
      apply(price, body);
      store.save();
      sendEntity(ctx, price);
    },
  },
  {
    method: 'GET',
    path: /^\/discounts$/,
    handler: ({ store, publicUrl }, { ctx, caller }) => {
      let items = byStatus(owned(store, 'discounts', caller), listParam(ctx, 'status'), null);
      const codes = listParam(ctx, 'code');
      if (codes)
        items = items.filter(
          (o) => typeof o.code === 'string' && codes.some((c) => c.toUpperCase() === String(o.code).toUpperCase()),
        );
      const ids = listParam(ctx, 'id');
      if (ids) items = items.filter((o) => ids.includes(o.id));
      sendList(ctx, publicUrl(), items);
    },
  },
  {
    method: 'POST',
    path: /^\/discounts$/,
    handler: ({ store }, { ctx, caller, body }) => {
      const c = new Checker(body)
        .only([
          'amount',
          'description',
          'type',
          'enabled_for_checkout',
          'code',
          'mode',
          'currency_code',
          'recur',
          'maximum_recurring_intervals',
          'usage_limit',
          'restrict_to',
          'expires_at',
          'custom_data',
          'discount_group_id',
        ])
        .string('amount', { required: true })
        .string('description', { required: true, max: 500 })
        .oneOf('type', DISCOUNT_TYPES, { required: true })
        .boolean('enabled_for_checkout')
        .string('code', { nullable: true, max: 32 })
        .boolean('recur')
        .customData();
      checkDiscountAmount(c);
      c.done();
      const code = typeof body.code === 'string' ? body.code : null;
      if (code) {
        const clash = owned(store, 'discounts', caller).find(
          (d) => typeof d.code === 'string' && d.code.toUpperCase() === code.toUpperCase(),
        );
        if (clash)
          throw new PaddleError(409, 'discount_code_conflict', `Discount code conflicts with Discount ID ${clash.id}`);
      }
      const discount = store.insert('discounts', {
        id: paddleId('dsc'),
        status: 'active',
        description: body.description,
        enabled_for_checkout: body.enabled_for_checkout ?? false,
        code,
        mode: body.mode ?? 'standard',
        type: body.type,
        amount: body.amount,
        currency_code: body.currency_code ?? null,
        recur: body.recur ?? false,
        maximum_recurring_intervals: body.maximum_recurring_intervals ?? null,
        usage_limit: body.usage_limit ?? null,
        restrict_to: body.restrict_to ?? null,
        expires_at: body.expires_at ?? null,
        custom_data: body.custom_data ?? null,
        times_used: 0,
        discount_group_id: body.discount_group_id ?? null,
        import_meta: null,
        created_at: now(),
        updated_at: now(),
        _account: caller.account,
        _mode: caller.mode,
      });
      sendEntity(ctx, discount, 201);
    },
  },
  {
    method: 'GET',
    path: /^\/discounts\/([^/]+)$/,
    handler: ({ store }, { ctx, caller, params }) => sendEntity(ctx, getOwned(store, 'discounts', caller, params[0])),
  },
  {
    method: 'PATCH',
    path: /^\/discounts\/([^/]+)$/,
    handler: ({ store }, { ctx, caller, params, body }) => {
      const discount = getOwned(store, 'discounts', caller, params[0]);
      const c = new Checker(body)
        .only([
          'amount',
          'description',
          'type',
          'enabled_for_checkout',
          'code',
          'currency_code',
          'recur',
          'maximum_recurring_intervals',
          'usage_limit',
          'restrict_to',
          'expires_at',
          'status',
          'custom_data',
          'discount_group_id',
        ])
        .string('amount')
        .string('description', { max: 500 })
        .oneOf('type', DISCOUNT_TYPES)
        .oneOf('status', DISCOUNT_STATUS)
        .string('code', { nullable: true, max: 32 })
        .customData();
      checkDiscountAmount(c, discount);
      c.done();
      apply(discount, body);
      store.save();
      sendEntity(ctx, discount);
    },
  },
];

function checkDiscountAmount(c: Checker, existing?: Stored): void {
  const type = (c.body.type ?? existing?.type) as string | undefined;
  const amount = (c.body.amount ?? existing?.amount) as string | undefined;
  const currency = c.body.currency_code !== undefined ? c.body.currency_code : existing?.currency_code;
  if (typeof amount !== 'string') return;
  if (type === 'percentage') {
    const n = Number(amount);
    if (!/^\d+(\.\d{1,2})?$/.test(amount) || n <= 0 || n > 100)
      c.fail('amount', 'percentage must be between 0.01 and 100');
  } else if (type === 'flat' || type === 'flat_per_seat') {
    if (!/^\d+$/.test(amount) || Number(amount) <= 0)
      c.fail('amount', 'must be a positive amount in the lowest denomination');
    if (!currency) c.fail('currency_code', 'is required for flat discounts');
  }
}
