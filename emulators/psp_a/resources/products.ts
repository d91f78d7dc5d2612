import { invalidParam, noSuch, StripeApiError } from '../errors';
import { newId, nowSeconds } from '../ids';
import { expandList, listEnvelope } from '../list';
import { allowOnly, applyMetadata, arr, bool, obj, str } from '../params';
import type { Renderers } from '../render';
import type { StripeObject } from '../repo';
import { route, type ApiDeps, type ApiRequest, type Route } from '../router';
import { createPrice } from './prices';

const CREATE = [
  'id',
  'name',
  'active',
  'default_price_data',
  'description',
  'images',
  'marketing_features',
  'metadata',
  'package_dimensions',
  'shippable',
  'statement_descriptor',
  'tax_code',
  'tax_details',
  'unit_label',
  'url',
  'type',
  'expand',
];
const UPDATE = [
  'active',
  'default_price',
  'description',
  'images',
  'marketing_features',
  'metadata',
  'name',
  'package_dimensions',
  'shippable',
  'statement_descriptor',
  'tax_code',
  'tax_details',
  'unit_label',
  'url',
  'expand',
];

function nullableStr(body: ApiRequest['body'], key: string): string | null | undefined {
  const v = str(body, key);
  return v === undefined ? undefined : v === '' ? null : v;
}

export function productRoutes({ repo }: ApiDeps, renderers: Renderers): Route[] {
  const show = (o: StripeObject, req: ApiRequest) =>
    renderers.products(o, expandList(req.method === 'GET' ? req.query : req.body));
  const load = (req: ApiRequest) => {
    const p = repo.getScoped('products', req.params.id, req.scope);
    if (!p) throw noSuch('product', req.params.id);
    return p;
  };

  const create = (req: ApiRequest) => {
    const b = req.body;
    allowOnly(b, CREATE);
    const name = str(b, 'name', true)!;
    const id = str(b, 'id');
    if (id !== undefined) {
      if (!id) throw invalidParam('id', 'Invalid id: must not be empty');
      if (repo.getScoped('products', id, req.scope)) {
        throw new StripeApiError(
          400,
          'invalid_request_error',
          'Product already exists.',
          'resource_already_exists',
          'id',
        );
      }
    }
    const images = (arr(b, 'images') ?? []).map(String);
    const now = nowSeconds();
    const product: StripeObject = {
      id: id ?? newId('prod', 14),
      object: 'product',
      active: bool(b, 'active') ?? true,
      created: now,
      default_price: null,
      description: nullableStr(b, 'description') ?? null,
      images,
      livemode: req.scope.livemode,
      marketing_features: [],
      metadata: applyMetadata({}, b),
      name,
      package_dimensions: null,
      shippable: bool(b, 'shippable') ?? null,
      statement_descriptor: nullableStr(b, 'statement_descriptor') ?? null,
      tax_code: nullableStr(b, 'tax_code') ?? null,
      type: 'service',
      unit_label: nullableStr(b, 'unit_label') ?? null,
      updated: now,
      url: nullableStr(b, 'url') ?? null,
      _account: req.scope.account,
    };
    const dpd = obj(b, 'default_price_data');
    if (dpd) {
      // default_price_data is validated as a price of this (not yet stored) product.
      const price = createPrice(repo, req.scope, { ...dpd, product: product.id }, product, 'default_price_data');
      product.default_price = price.id;
    }
    repo.insert('products', product);
    return show(product, req);
  };

  const update = (req: ApiRequest) => {
    const b = req.body;
    allowOnly(b, UPDATE);
    const p = load(req);
    const name = str(b, 'name');
    if (name === '')
      throw invalidParam(
        'name',
        "You passed an empty string for 'name'. We assume empty values are an attempt to unset a parameter; however 'name' cannot be unset.",
      );
    if (name !== undefined) p.name = name;
    const active = bool(b, 'active');
    if (active !== undefined) p.active = active;
    for (const key of ['description', 'statement_descriptor', 'tax_code', 'unit_label', 'url'] as const) {
      const v = nullableStr(b, key);
      if (v !== undefined) p[key] = v;
    }
    const shippable = bool(b, 'shippable');
    if (shippable !== undefined) p.shippable = shippable;
    const images = arr(b, 'images');
    if (images) p.images = images.map(String);
    const dp = str(b, 'default_price');
    if (dp !== undefined) {
      if (dp === '') p.default_price = null;
      else {
        const price = repo.getScoped('prices', dp, req.scope);
        if (!price || price.product !== p.id) throw noSuch('price', dp, 'default_price');
        if (!price.active) throw invalidParam('default_price', 'The default price must be active.');
        p.default_price = dp;
      }
    }
    p.metadata = applyMetadata(p.metadata as Record<string, string>, b);
    p.updated = nowSeconds();
    repo.touch();
    return show(p, req);
  };

  const del = (req: ApiRequest) => {
    const p = load(req);
    if (repo.listScoped('prices', req.scope, (x) => x.product === p.id).length > 0) {
      throw new StripeApiError(
        400,
        'invalid_request_error',
        'This product cannot be deleted because it has one or more user-created prices.',
      );
    }
    repo.remove('products', p);
    return { id: p.id, object: 'product', deleted: true };
  };

  const list = (req: ApiRequest) => {
    const q = req.query;
    const active = bool(q, 'active');
    const ids = arr(q, 'ids')?.map(String);
    const shippable = bool(q, 'shippable');
    const items = repo.listScoped(
      'products',
      req.scope,
      (p) =>
        (active === undefined || p.active === active) &&
        (!ids || ids.includes(p.id)) &&
        (shippable === undefined || p.shippable === shippable),
    );
    return listEnvelope(q, '/v1/products', items, renderers.products, 'product');
  };

  return [
    route('GET', '/v1/products', list),
    route('POST', '/v1/products', create),
    route('GET', '/v1/products/:id', (req) => show(load(req), req)),
    route('POST', '/v1/products/:id', update),
    route('DELETE', '/v1/products/:id', del),
  ];
}
