import type { EmulatorStore } from '../common/types';
import { badRequest, noSuchId } from './errors';
import {
  collection,
  currencyOf,
  notesOf,
  onlyFields,
  readBody,
  requireAmount,
  requireString,
  route,
  view,
  type Route,
} from './http';
import { nowSec, rzpId } from './ids';
import { findOwned, insertOwned, owned, type Caller } from './state';

/**
 * Items API (https://razorpay.com/docs/api/payments/items/): POST/GET /v1/items,
 * GET/PATCH/DELETE /v1/items/:id. Razorpay documents no `notes` on items; the emulator
 * keeps the ones our adapter sends so drift can match items to products (see the adapter).
 */
const CREATE_FIELDS = [
  'name',
  'description',
  'amount',
  'currency',
  'notes',
  'hsn_code',
  'sac_code',
  'tax_rate',
  'tax_inclusive',
  'tax_id',
  'tax_group_id',
  'unit',
];
const UPDATE_FIELDS = [...CREATE_FIELDS, 'active'];

export function itemRoutes(store: EmulatorStore, who: (ctx: Parameters<Route['handler']>[0]) => Caller): Route[] {
  return [
    route('POST', '/v1/items', async (ctx) => {
      const caller = who(ctx);
      const body = await readBody(ctx);
      onlyFields(body, CREATE_FIELDS);
      const name = requireString(body, 'name');
      const amount = requireAmount(body);
      const currency = currencyOf(body);
      const now = nowSec();
      const item = insertOwned(store, 'items', caller, {
        id: rzpId('item'),
        active: true,
        name,
        description: typeof body.description === 'string' ? body.description : null,
        amount,
        unit_amount: amount,
        currency,
        type: 'invoice',
        unit: null,
        tax_inclusive: body.tax_inclusive === true,
        hsn_code: body.hsn_code ?? null,
        sac_code: body.sac_code ?? null,
        tax_rate: body.tax_rate ?? null,
        tax_id: null,
        tax_group_id: null,
        notes: notesOf(body),
        created_at: now,
        updated_at: now,
      });
      return view(item);
    }),
    route('GET', '/v1/items', (ctx) => {
      let rows = owned(store, 'items', who(ctx));
      const active = ctx.query.active;
      if (active === '1' || active === 'true') rows = rows.filter((r) => r.active === true);
      if (active === '0' || active === 'false') rows = rows.filter((r) => r.active === false);
      return collection(ctx, rows);
    }),
    route('GET', '/v1/items/:id', (ctx, p) => view(findOwned(store, 'items', who(ctx), p.id) ?? throwNoSuchId())),
    route('PATCH', '/v1/items/:id', async (ctx, p) => {
      const item = findOwned(store, 'items', who(ctx), p.id) ?? throwNoSuchId();
      const body = await readBody(ctx);
      onlyFields(body, UPDATE_FIELDS);
      if (body.name !== undefined) item.name = requireString(body, 'name');
      if (body.description !== undefined)
        item.description = body.description === null ? null : String(body.description);
      if (body.amount !== undefined) item.amount = item.unit_amount = requireAmount(body);
      if (body.currency !== undefined) item.currency = currencyOf(body);
      if (body.notes !== undefined) item.notes = notesOf(body);
      if (body.active !== undefined) {
        const a = body.active;
        if (![true, false, 1, 0, '1', '0', 'true', 'false'].includes(a as never))
          throw badRequest('The active field must be true or false.', 'active');
        item.active = a === true || a === 1 || a === '1' || a === 'true';
      }
      item.updated_at = nowSec();
      store.save();
      return view(item);
    }),
    route('DELETE', '/v1/items/:id', (ctx, p) => {
      const item = findOwned(store, 'items', who(ctx), p.id) ?? throwNoSuchId();
      const list = store.list('items');
      list.splice(list.indexOf(item), 1);
      store.save();
      return [];
    }),
  ];
}

export function throwNoSuchId(): never {
  throw noSuchId();
}
