import type { EmulatorStore } from '../common/types';
import { badRequest } from './errors';
import { currencyOf, notesOf, onlyFields, page, readBody, requireAmount, route, view, type Route } from './http';
import { nowSec, randomToken, rzpId } from './ids';
import { throwNoSuchId } from './items';
import { findOwned, insertOwned, owned, type Caller } from './state';

/**
 * Payment Links API (https://razorpay.com/docs/api/payments/payment-links/):
 * POST/GET /v1/payment_links, GET/PATCH /v1/payment_links/:id, POST …/:id/cancel.
 * `reference_id` is unique per account and mode; a second create with the same one is
 * refused, which is what makes a retried create safe.
 */
const CREATE_FIELDS = [
  'amount',
  'currency',
  'accept_partial',
  'first_min_partial_amount',
  'expire_by',
  'reference_id',
  'description',
  'customer',
  'notify',
  'reminder_enable',
  'notes',
  'callback_url',
  'callback_method',
  'upi_link',
  'options',
];

export function paymentLinkRoutes(
  store: EmulatorStore,
  who: (ctx: Parameters<Route['handler']>[0]) => Caller,
  publicUrl: () => string,
): Route[] {
  const checkReference = (caller: Caller, ref: unknown, self?: string) => {
    if (ref === undefined || ref === null || ref === '') return;
    if (typeof ref !== 'string' || ref.length > 40)
      throw badRequest('The reference id may not be greater than 40 characters.', 'reference_id');
    const clash = owned(store, 'payment_links', caller).find((l) => l.reference_id === ref && l.id !== self);
    if (clash) throw badRequest(`Payment Link with reference id ${ref} already exists`, 'reference_id');
  };
  return [
    route('POST', '/v1/payment_links', async (ctx) => {
      const caller = who(ctx);
      const body = await readBody(ctx);
      onlyFields(body, CREATE_FIELDS);
      const amount = requireAmount(body);
      const currency = currencyOf(body, 'INR');
      checkReference(caller, body.reference_id);
      const now = nowSec();
      const code = randomToken(8);
      const customer = (body.customer && typeof body.customer === 'object' ? body.customer : {}) as Record<
        string,
        unknown
      >;
      const notify = (body.notify && typeof body.notify === 'object' ? body.notify : {}) as Record<string, unknown>;
      const link = insertOwned(store, 'payment_links', caller, {
        accept_partial: body.accept_partial === true,
        amount,
        amount_paid: 0,
        callback_method: typeof body.callback_method === 'string' ? body.callback_method : '',
        callback_url: typeof body.callback_url === 'string' ? body.callback_url : '',
        cancelled_at: 0,
        created_at: now,
        currency,
        customer: { name: customer.name ?? null, email: customer.email ?? null, contact: customer.contact ?? null },
        description: typeof body.description === 'string' ? body.description : '',
        expire_by: typeof body.expire_by === 'number' ? body.expire_by : 0,
        expired_at: 0,
        first_min_partial_amount: typeof body.first_min_partial_amount === 'number' ? body.first_min_partial_amount : 0,
        id: rzpId('plink'),
        notes: notesOf(body),
        notify: { email: notify.email === true, sms: notify.sms === true, whatsapp: notify.whatsapp === true },
        payments: null,
        reference_id: typeof body.reference_id === 'string' ? body.reference_id : '',
        reminder_enable: body.reminder_enable === true,
        reminders: [],
        short_url: `${publicUrl()}/i/${code}`,
        status: 'created',
        updated_at: now,
        upi_link: body.upi_link === true,
        user_id: '',
        whatsapp_link: false,
        _code: code,
      });
      return view(link);
    }),
    route('GET', '/v1/payment_links', (ctx) => {
      let rows = owned(store, 'payment_links', who(ctx));
      if (typeof ctx.query.reference_id === 'string')
        rows = rows.filter((l) => l.reference_id === ctx.query.reference_id);
      if (typeof ctx.query.payment_id === 'string') {
        const pid = ctx.query.payment_id;
        rows = rows.filter(
          (l) => Array.isArray(l.payments) && l.payments.some((p) => (p as Record<string, unknown>).payment_id === pid),
        );
      }
      // Razorpay answers this list as {payment_links: [...]}, not as a collection.
      return { payment_links: page(ctx, rows).map(view) };
    }),
    route('GET', '/v1/payment_links/:id', (ctx, p) =>
      view(findOwned(store, 'payment_links', who(ctx), p.id) ?? throwNoSuchId()),
    ),
    route('PATCH', '/v1/payment_links/:id', async (ctx, p) => {
      const caller = who(ctx);
      const link = findOwned(store, 'payment_links', caller, p.id) ?? throwNoSuchId();
      const body = await readBody(ctx);
      onlyFields(body, ['accept_partial', 'reference_id', 'expire_by', 'notes', 'reminder_enable']);
      if (link.status !== 'created')
        throw badRequest(`Update is not allowed for a payment link in ${link.status} state`);
      if (body.reference_id !== undefined) {
        checkReference(caller, body.reference_id, link.id as string);
        link.reference_id = body.reference_id;
      }
      if (body.notes !== undefined) link.notes = notesOf(body);
      if (body.expire_by !== undefined) link.expire_by = Number(body.expire_by);
      if (body.accept_partial !== undefined) link.accept_partial = body.accept_partial === true;
      if (body.reminder_enable !== undefined) link.reminder_enable = body.reminder_enable === true;
      link.updated_at = nowSec();
      store.save();
      return view(link);
    }),
    route('POST', '/v1/payment_links/:id/cancel', (ctx, p) => {
      const link = findOwned(store, 'payment_links', who(ctx), p.id) ?? throwNoSuchId();
      if (link.status === 'paid') throw badRequest('Payment link cannot be cancelled as it is already paid');
      if (link.status === 'cancelled') throw badRequest('Payment link has already been cancelled');
      link.status = 'cancelled';
      link.cancelled_at = link.updated_at = nowSec();
      store.save();
      return view(link);
    }),
  ];
}

/** The hosted page behind a link's short_url (rzp.io/i/… at Razorpay). */
export function hostedLinkPage(store: EmulatorStore, code: string): string | null {
  const link = store.find('payment_links', (l) => l._code === code);
  if (!link) return null;
  const esc = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const amount = (Number(link.amount) / 100).toFixed(2);
  return `<!doctype html><html><head><meta charset="utf-8"><title>Pay ${esc(link.description)}</title></head>
<body><main><h1>${esc(link.description) || 'Payment request'}</h1>
<p>Amount: ${esc(link.currency)} ${esc(amount)}</p><p>Status: ${esc(link.status)}</p>
<p>This is the psp_c emulator's stand-in for a Razorpay hosted payment page.</p></main></body></html>`;
}
