import type { EmulatorStore } from '../common/types';
import { badRequest } from './errors';
import { collection, notesOf, onlyFields, readBody, requireString, route, view, type Route } from './http';
import { nowSec, rzpId } from './ids';
import { throwNoSuchId } from './items';
import { findOwned, insertOwned, owned, type Caller } from './state';

/**
 * The emulator's stand-in for Razorpay Offers. At Razorpay, offers are created in the
 * Dashboard only (the API takes an existing `offer_id` on subscriptions and payment
 * links); the spec names an "offer" as the regional provider's coupon counterpart, so the
 * emulator serves POST/GET /v1/offers and GET /v1/offers/:id in Razorpay's style.
 * `percent_rate` is in basis points (1000 = 10%); `flat_discount` is in currency subunits.
 */
export function offerRoutes(store: EmulatorStore, who: (ctx: Parameters<Route['handler']>[0]) => Caller): Route[] {
  return [
    route('POST', '/v1/offers', async (ctx) => {
      const caller = who(ctx);
      const body = await readBody(ctx);
      onlyFields(body, [
        'name',
        'code',
        'display_text',
        'percent_rate',
        'flat_discount',
        'currency',
        'duration',
        'max_cycles',
        'notes',
      ]);
      const code = requireString(body, 'code', 40);
      if (owned(store, 'offers', caller).some((o) => String(o.code).toLowerCase() === code.toLowerCase())) {
        throw badRequest(`Offer with code ${code} already exists`, 'code');
      }
      const percent = body.percent_rate;
      const flat = body.flat_discount;
      if ((percent === undefined) === (flat === undefined))
        throw badRequest('Exactly one of percent_rate and flat_discount is required.', 'percent_rate');
      if (
        percent !== undefined &&
        (!Number.isInteger(percent) || (percent as number) < 1 || (percent as number) > 10000)
      ) {
        throw badRequest('The percent_rate must be an integer between 1 and 10000.', 'percent_rate');
      }
      if (flat !== undefined && (!Number.isInteger(flat) || (flat as number) < 1))
        throw badRequest('The flat_discount must be a positive integer.', 'flat_discount');
      if (flat !== undefined && (typeof body.currency !== 'string' || !/^[A-Z]{3}$/.test(body.currency))) {
        throw badRequest('The currency field is required with flat_discount.', 'currency');
      }
      const duration = body.duration ?? 'once';
      if (!['once', 'repeating', 'forever'].includes(duration as string))
        throw badRequest('The duration must be once, repeating or forever.', 'duration');
      const offer = insertOwned(store, 'offers', caller, {
        id: rzpId('offer'),
        entity: 'offer',
        name: typeof body.name === 'string' ? body.name : code,
        code,
        display_text: typeof body.display_text === 'string' ? body.display_text : null,
        type: 'instant',
        percent_rate: percent ?? null,
        flat_discount: flat ?? null,
        currency: flat !== undefined ? body.currency : null,
        duration,
        max_cycles: typeof body.max_cycles === 'number' ? body.max_cycles : null,
        active: true,
        notes: notesOf(body),
        created_at: nowSec(),
      });
      return view(offer);
    }),
    route('GET', '/v1/offers', (ctx) => {
      let rows = owned(store, 'offers', who(ctx));
      if (typeof ctx.query.code === 'string') {
        const code = ctx.query.code.toLowerCase();
        rows = rows.filter((o) => String(o.code).toLowerCase() === code);
      }
      return collection(ctx, rows);
    }),
    route('GET', '/v1/offers/:id', (ctx, p) => view(findOwned(store, 'offers', who(ctx), p.id) ?? throwNoSuchId())),
  ];
}
