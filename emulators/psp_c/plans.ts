import type { EmulatorStore } from '../common/types';
import { badRequest } from './errors';
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
import { throwNoSuchId } from './items';
import { findOwned, insertOwned, owned, type Caller } from './state';

/**
 * Plans API (https://razorpay.com/docs/api/payments/subscriptions/#create-a-plan):
 * POST/GET /v1/plans, GET /v1/plans/:id. Plans are immutable at Razorpay: there is no
 * update or delete, so a new price means a new plan.
 */
const PERIODS = ['daily', 'weekly', 'monthly', 'yearly'];

export function planRoutes(store: EmulatorStore, who: (ctx: Parameters<Route['handler']>[0]) => Caller): Route[] {
  return [
    route('POST', '/v1/plans', async (ctx) => {
      const caller = who(ctx);
      const body = await readBody(ctx);
      onlyFields(body, ['period', 'interval', 'item', 'notes']);
      const period = body.period;
      if (typeof period !== 'string' || !PERIODS.includes(period))
        throw badRequest('The period must be one of daily, weekly, monthly, yearly.', 'period');
      const interval = typeof body.interval === 'string' ? Number(body.interval) : body.interval;
      if (typeof interval !== 'number' || !Number.isInteger(interval) || interval < 1)
        throw badRequest('The interval must be an integer of at least 1.', 'interval');
      if (period === 'daily' && interval < 7)
        throw badRequest('The interval must be at least 7 for a daily plan.', 'interval');
      const item = body.item;
      if (!item || typeof item !== 'object' || Array.isArray(item))
        throw badRequest('The item field is required.', 'item');
      const it = item as Record<string, unknown>;
      onlyFields(it, ['name', 'amount', 'currency', 'description']);
      const now = nowSec();
      const amount = requireAmount(it);
      const plan = insertOwned(store, 'plans', caller, {
        id: rzpId('plan'),
        entity: 'plan',
        interval,
        period,
        item: {
          id: rzpId('item'),
          active: true,
          name: requireString(it, 'name'),
          description: typeof it.description === 'string' ? it.description : null,
          amount,
          unit_amount: amount,
          currency: currencyOf(it),
          type: 'plan',
          unit: null,
          tax_inclusive: false,
          hsn_code: null,
          sac_code: null,
          tax_rate: null,
          tax_id: null,
          tax_group_id: null,
          created_at: now,
          updated_at: now,
        },
        notes: notesOf(body),
        created_at: now,
      });
      return view(plan);
    }),
    route('GET', '/v1/plans', (ctx) => collection(ctx, owned(store, 'plans', who(ctx)))),
    route('GET', '/v1/plans/:id', (ctx, p) => view(findOwned(store, 'plans', who(ctx), p.id) ?? throwNoSuchId())),
  ];
}
