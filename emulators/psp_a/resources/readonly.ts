import { noSuch } from '../errors';
import { expandList, listEnvelope } from '../list';
import { arr, str } from '../params';
import { render, type StripeObject } from '../repo';
import type { Renderers } from '../render';
import { route, type ApiDeps, type ApiRequest, type Route } from '../router';

/** Objects a checkout creates; the adapter only reads them, so they are list + retrieve. */
const KINDS: { kind: string; path: string; what: string; filters: string[] }[] = [
  { kind: 'customers', path: 'customers', what: 'customer', filters: ['email'] },
  { kind: 'subscriptions', path: 'subscriptions', what: 'subscription', filters: ['customer', 'status'] },
  { kind: 'invoices', path: 'invoices', what: 'invoice', filters: ['customer', 'status', 'subscription'] },
  { kind: 'payment_intents', path: 'payment_intents', what: 'payment_intent', filters: ['customer'] },
  { kind: 'charges', path: 'charges', what: 'charge', filters: ['customer', 'payment_intent'] },
  { kind: 'events', path: 'events', what: 'event', filters: ['type'] },
];

function matches(o: StripeObject, kind: string, field: string, value: string): boolean {
  if (kind === 'invoices' && field === 'subscription') {
    const parent = o.parent as { subscription_details?: { subscription?: string } } | null;
    return parent?.subscription_details?.subscription === value;
  }
  return o[field] === value;
}

export function readonlyRoutes({ repo, accounts }: ApiDeps, renderers: Renderers): Route[] {
  const routes: Route[] = [];
  for (const { kind, path, what, filters } of KINDS) {
    routes.push(
      route('GET', `/v1/${path}`, (req: ApiRequest) => {
        const q = req.query;
        const wanted = filters.map((f) => [f, str(q, f)] as const).filter(([, v]) => v !== undefined) as [
          string,
          string,
        ][];
        const types = kind === 'events' ? arr(q, 'types')?.map(String) : undefined;
        // Stripe hides canceled subscriptions unless asked for them.
        const status = kind === 'subscriptions' ? str(q, 'status') : undefined;
        const items = repo.listScoped(
          kind,
          req.scope,
          (o) =>
            wanted.every(([f, v]) => (f === 'status' && v === 'all') || matches(o, kind, f, v)) &&
            (!types || types.includes(String(o.type))) &&
            (kind !== 'subscriptions' || status !== undefined || o.status !== 'canceled'),
        );
        return listEnvelope(q, `/v1/${path}`, items, renderers[kind], what);
      }),
      route('GET', `/v1/${path}/:id`, (req: ApiRequest) => {
        const o = repo.getScoped(kind, req.params.id, req.scope);
        if (!o) throw noSuch(what, req.params.id);
        return renderers[kind](o, expandList(req.query));
      }),
    );
  }
  routes.push(
    // GET /v1/account: the account acted on (the Stripe-Account header's, else the key's own).
    route('GET', '/v1/account', (req) => render(accounts.get(req.scope.account)!)),
    route('GET', '/v1/accounts/:id', (req) => {
      if (req.params.id !== req.scope.account) throw noSuch('account', req.params.id);
      return render(accounts.get(req.scope.account)!);
    }),
    route('GET', '/v1/balance', (req) => {
      const paid = repo.listScoped('charges', req.scope, (c) => c.status === 'succeeded');
      const byCurrency = new Map<string, number>();
      for (const c of paid)
        byCurrency.set(
          String(c.currency),
          (byCurrency.get(String(c.currency)) ?? 0) + Number(c.amount) - Number(c.amount_refunded ?? 0),
        );
      if (byCurrency.size === 0) byCurrency.set('usd', 0);
      const entries = [...byCurrency].map(([currency, amount]) => ({
        amount,
        currency,
        source_types: { card: amount },
      }));
      return {
        object: 'balance',
        available: entries,
        livemode: req.scope.livemode,
        pending: entries.map((e) => ({ ...e, amount: 0, source_types: { card: 0 } })),
      };
    }),
  );
  return routes;
}
