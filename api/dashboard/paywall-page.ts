import Router from '@koa/router';
import type Koa from 'koa';
import type { Services } from '../../operations/services';
import { knownSkus } from '../../db/products';
import { getPaywallRow, publishDraft, saveDraft } from '../../db/paywalls';
import { withTenant } from '../../db/tenant-tx';
import { isPaywallPublished, paywallConfigSchema } from '../../domain/paywall';
import { recordUserAudit } from '../../db/audit';
import { readForm } from './form';
import { formatDate, html } from './html';
import { csrfField, page } from './layout';

/** "sku" or "sku | label", one product per line, in the order the SDK shows them. */
function parseProductLines(text: string): { skus: string[]; labels: Record<string, string> } {
  const skus: string[] = [];
  const labels: Record<string, string> = {};
  for (const line of text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean)) {
    const [sku, ...rest] = line.split('|');
    skus.push(sku.trim());
    if (rest.length) labels[sku.trim()] = rest.join('|').trim();
  }
  return { skus, labels };
}

function productLines(config: Record<string, unknown> | undefined): string {
  const skus = (config?.skus as string[] | undefined) ?? [];
  const labels = (config?.labels as Record<string, string> | undefined) ?? {};
  return skus.map((s) => (labels[s] ? `${s} | ${labels[s]}` : s)).join('\n');
}

export function paywallPage(services: Services): Router {
  const { db } = services;
  const r = new Router();

  const render = async (ctx: Koa.Context, msg: { notice?: string; error?: string } = {}, draft?: Record<string, unknown>) => {
    const user = ctx.state.user!;
    const row = await withTenant(db, user.tenant_id, (trx) => getPaywallRow(trx));
    const config = draft ?? (row?.config as Record<string, unknown> | undefined);
    const state = !row ? 'No paywall yet.' : isPaywallPublished(row) ? `Published ${formatDate(row.published_at)}; no unpublished changes.` : 'This draft has changes that are not published yet.';
    ctx.type = 'html';
    ctx.body = page({
      title: 'Paywall', user, csrf: ctx.state.csrf!, ...msg,
      body: html`<p>${state} <code>GET /v1/paywall</code> serves the published version.</p>
<form method="post" action="/paywall">${csrfField(ctx.state.csrf!)}
<label for="pw-title">Title</label><input id="pw-title" name="title" type="text" required maxlength="120" value="${String(config?.title ?? '')}">
<label for="pw-subtitle">Subtitle (optional)</label><input id="pw-subtitle" name="subtitle" type="text" maxlength="200" value="${String(config?.subtitle ?? '')}">
<label for="pw-products">Products, in order</label>
<textarea id="pw-products" name="products" required aria-describedby="pw-products-hint">${productLines(config)}</textarea>
<p id="pw-products-hint">One SKU per line, optionally followed by <code>| label</code>, e.g. <code>premium_annual | Best value</code>.</p>
<label for="pw-default">Default product (optional)</label><input id="pw-default" name="default_sku" type="text" value="${String(config?.default_sku ?? '')}">
<button type="submit">Save draft</button></form>
${row && !isPaywallPublished(row) ? html`<form method="post" action="/paywall/publish">${csrfField(ctx.state.csrf!)}<button type="submit">Publish</button></form>` : ''}`,
    });
  };

  r.get('/paywall', (ctx) => render(ctx));

  r.post('/paywall', async (ctx) => {
    const user = ctx.state.user!;
    const form = await readForm(ctx);
    const { skus, labels } = parseProductLines(form.get('products') ?? '');
    const previous = await withTenant(db, user.tenant_id, (trx) => getPaywallRow(trx));
    const input = {
      ...((previous?.config as Record<string, unknown>) ?? {}), // keep keys this form does not edit (theme, features)
      title: form.get('title') ?? '',
      subtitle: (form.get('subtitle') ?? '').trim() || undefined,
      skus,
      labels: Object.keys(labels).length ? labels : undefined,
      default_sku: (form.get('default_sku') ?? '').trim() || undefined,
    };
    const parsed = paywallConfigSchema.safeParse(input);
    const audit = (outcome: string, detail: Record<string, unknown> = {}) =>
      recordUserAudit(db, { tenantId: user.tenant_id, userId: user.id, action: 'dashboard.paywall.save', requestId: ctx.state.requestId, outcome, detail });
    if (!parsed.success) {
      await audit('invalid_request');
      ctx.status = 400;
      return render(ctx, { error: parsed.error.issues[0].message }, input);
    }
    const unknown = await withTenant(db, user.tenant_id, async (trx) => {
      const known = await knownSkus(trx, parsed.data.skus);
      const missing = parsed.data.skus.filter((s) => !known.has(s));
      if (missing.length === 0) await saveDraft(trx, user.tenant_id, parsed.data);
      return missing;
    });
    if (unknown.length) {
      await audit('unknown_product', { skus: unknown });
      ctx.status = 400;
      return render(ctx, { error: `No product with SKU ${unknown.join(', ')} in your catalogue.` }, input);
    }
    await audit('ok', { skus: parsed.data.skus });
    await render(ctx, { notice: 'Draft saved. Publish it to serve it to the SDK.' });
  });

  r.post('/paywall/publish', async (ctx) => {
    const user = ctx.state.user!;
    await readForm(ctx);
    const ok = await withTenant(db, user.tenant_id, (trx) => publishDraft(trx));
    await recordUserAudit(db, { tenantId: user.tenant_id, userId: user.id, action: 'dashboard.paywall.publish', requestId: ctx.state.requestId, outcome: ok ? 'ok' : 'not_found' });
    if (!ok) ctx.status = 404;
    await render(ctx, ok ? { notice: 'Published. GET /v1/paywall now serves this version.' } : { error: 'There is no paywall to publish yet.' });
  });

  return r;
}
