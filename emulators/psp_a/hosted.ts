import type Koa from 'koa';
import type { CheckoutParams } from '../common/types';
import type { Repo } from './repo';

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * Where hosted-page purchases send their webhooks: the account's registered endpoint (like Stripe's dashboard setting).
 */
export const WEBHOOK_ENDPOINTS = 'webhook_endpoints';

async function readForm(req: NodeJS.ReadableStream): Promise<URLSearchParams> {
  let raw = '';
  for await (const chunk of req) {
    raw += chunk;
    if (raw.length > 16_384) break;
  }
  return new URLSearchParams(raw);
}

/**
 * GET /b/<code>: the page a payment link's `url` opens, so a browser following a link sees
 * what it sells, with a Pay form (`client_reference_id` and `prefilled_email` from the
 * query are carried, as Stripe does). POST /b/<code> pays: the same purchase as
 * POST /__control/checkout, its webhooks sent to the account's registered endpoint
 * (POST /__control/webhook_endpoints); the page then closes its tab.
 */
export function createHostedPages({
  repo,
  checkout,
}: {
  repo: Repo;
  checkout?: (p: CheckoutParams) => Promise<unknown>;
}): Koa.Middleware {
  return async (ctx, next) => {
    const m = /^\/b\/(?:test_)?([A-Za-z0-9]+)$/.exec(ctx.path);
    if (!m || (ctx.method !== 'GET' && ctx.method !== 'POST')) return next();
    if (ctx.method === 'POST') return pay(ctx, m[1]);
    const link = repo.all('payment_links').find((l) => l._code === m[1]);
    ctx.type = 'text/html';
    if (!link) {
      ctx.status = 404;
      ctx.body = '<!doctype html><title>Not found</title><h1>This link is no longer available</h1>';
      return;
    }
    if (!link.active) {
      ctx.body = `<!doctype html><title>Unavailable</title><h1>${esc(String(link.inactive_message ?? 'This link is no longer active.'))}</h1>`;
      return;
    }
    const items = link._line_items as { price: string; quantity: number }[];
    const scope = { account: String(link._account), livemode: link.livemode === true };
    const rows = items.map((i) => {
      const price = repo.getScoped('prices', i.price, scope);
      const product = price ? repo.getScoped('products', String(price.product), scope) : undefined;
      const rec = price?.recurring as { interval?: string } | null;
      const amount = price
        ? `${(Number(price.unit_amount) / 100).toFixed(2)} ${String(price.currency).toUpperCase()}${rec ? ` / ${rec.interval}` : ''}`
        : '';
      return `<li>${esc(String(product?.name ?? i.price))} — ${esc(amount)}</li>`;
    });
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Checkout</title></head><body>
<h1>Checkout${link.livemode ? '' : ' (test mode)'}</h1><ul>${rows.join('')}</ul>
<form method="post">
<input type="hidden" name="client_reference_id" value="${esc(String(ctx.query.client_reference_id ?? ''))}">
<label>Email <input name="email" type="email" required value="${esc(String(ctx.query.prefilled_email ?? 'customer@example.com'))}"></label>
<label>Country <input name="country" maxlength="2" pattern="[A-Za-z]{2}" value="US"></label>
<label>Card <input name="card" value="4242 4242 4242 4242" autocomplete="off"></label>
<button type="submit" id="pay">Pay</button></form></body></html>`;
  };

  async function pay(ctx: Koa.Context, code: string) {
    ctx.type = 'text/html';
    const link = repo.all('payment_links').find((l) => l._code === code && l.active === true);
    const form = await readForm(ctx.req);
    const sku = (link?.metadata as Record<string, string> | undefined)?.sku;
    const endpoint = link
      ? (repo.store.list(WEBHOOK_ENDPOINTS) as { account?: string; url: string }[])
          .filter((e) => !e.account || e.account === link._account)
          .at(-1)
      : undefined;
    const email = form.get('email') ?? '';
    if (!link || !sku || !endpoint || !checkout || !email) {
      ctx.status = !link ? 404 : 400;
      ctx.body = `<!doctype html><title>Payment failed</title><h1>Payment failed</h1><p>${esc(!link ? 'This link is no longer available.' : !sku ? 'This link sells no SKU.' : !endpoint ? 'No webhook endpoint is registered for this account.' : 'An email is required.')}</p>`;
      return;
    }
    const appUserId = form.get('client_reference_id') || undefined;
    const country = form.get('country') || undefined;
    await checkout({
      sku,
      email,
      target: endpoint.url,
      mode: link.livemode === true ? 'live' : 'test',
      account: String(link._account),
      ...(appUserId ? { app_user_id: appUserId } : {}),
      ...(country ? { country } : {}),
    });
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Payment succeeded</title></head><body>
<h1 id="paid">Payment succeeded</h1><p>You can close this tab.</p>
<script>setTimeout(() => window.close(), 500)</script></body></html>`;
  }
}
