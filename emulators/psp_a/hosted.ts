import type Koa from 'koa';
import type { Repo } from './repo';

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * GET /b/<code>: the page a payment link's `url` opens, so a browser following a link sees
 * what it sells. Completing a purchase is driven by POST /__control/checkout, which knows
 * where to deliver the webhooks.
 */
export function createHostedPages({ repo }: { repo: Repo }): Koa.Middleware {
  return async (ctx, next) => {
    const m = /^\/b\/(?:test_)?([A-Za-z0-9]+)$/.exec(ctx.path);
    if (!m || ctx.method !== 'GET') return next();
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
      const amount = price ? `${(Number(price.unit_amount) / 100).toFixed(2)} ${String(price.currency).toUpperCase()}${rec ? ` / ${rec.interval}` : ''}` : '';
      return `<li>${esc(String(product?.name ?? i.price))} — ${esc(amount)}</li>`;
    });
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Checkout</title></head><body>
<h1>Checkout${link.livemode ? '' : ' (test mode)'}</h1><ul>${rows.join('')}</ul>
<p>This emulator completes purchases through <code>POST /__control/checkout</code>.</p></body></html>`;
  };
}
