import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import type { z } from 'zod';
import type { Services } from '../../operations/services';
import { formatMinorAmount, parseMajorAmount, PLATFORMS, PRODUCT_TYPES, TIERS } from '../../domain/catalogue';
import { readForm } from './form';
import { formatDate, html } from './html';
import { csrfField, page } from './layout';
import { createProductOp } from '../../operations/products/create';
import { setPricingOp } from '../../operations/products/set-pricing';
import type { Operation } from '../../operations/types';
import { readThrough, runOperation } from './run-operation';
import { getProduct, type loadProductDetail } from '../../operations/products/get';
import { summarizeProducts, type productSummary } from '../../operations/products/summaries';
import { updateProductOp } from '../../operations/products/update';
import { mayAct } from './page-access';
import { DEFAULT_ENTITLEMENT } from '../../domain/revenuecat';

type Detail = Awaited<ReturnType<typeof loadProductDetail>>;
type ProductSummary = z.infer<typeof productSummary>;
type Msg = { notice?: string; error?: string };

const PLATFORM_LABEL: Record<(typeof PLATFORMS)[number], string> = {
  web: 'Web',
  desktop: 'Desktop',
  ios: 'iOS',
  macos: 'macOS',
  android: 'Android',
};

/**
 * The form's fields as the operation input the tool server takes, so one zod schema (the
 * operation's) and one trial rule (domain/catalogue) judge both surfaces. Empty text means
 * "none"; an empty trial fieldset clears trial_per_platform.
 */
function productFromForm(form: URLSearchParams): Record<string, unknown> {
  const text = (name: string) => (form.get(name) ?? '').trim();
  const trial: Record<string, number> = {};
  for (const p of PLATFORMS) {
    const v = text(`trial_${p}`);
    if (v !== '') trial[p] = /^\d+$/.test(v) ? Number(v) : Number.NaN;
  }
  return {
    name: text('name') || undefined,
    type: text('type') || undefined,
    tier: text('tier') || null,
    android_store_product_id: text('android_store_product_id') || null,
    ios_store_product_id: text('ios_store_product_id') || null,
    trial_per_platform: Object.keys(trial).length ? trial : null,
    // Empty: the default entitlement (premium), as on the API a null resets it.
    entitlement: text('entitlement') || null,
  };
}

function productFields(p: Partial<Detail> | Record<string, unknown>, opts: { sku: boolean }) {
  const v = (k: string) => {
    const x = (p as Record<string, unknown>)[k];
    return x === null || x === undefined ? '' : String(x);
  };
  const trial = ((p as Record<string, unknown>).trial_per_platform ?? {}) as Record<string, unknown>;
  return html`${
    opts.sku
      ? html`<label for="p-sku">SKU</label><input id="p-sku" name="sku" type="text" required maxlength="100" autocapitalize="none" aria-describedby="p-sku-hint" value="${v('sku')}">
<p id="p-sku-hint">Lower-case letters, digits, dots, underscores and hyphens, e.g. <code>premium_monthly</code>. It cannot change later.</p>`
      : ''
  }
<label for="p-name">Name</label><input id="p-name" name="name" type="text" maxlength="200" value="${v('name')}">
<label for="p-type">Type</label><select id="p-type" name="type">${PRODUCT_TYPES.map((t) => html`<option value="${t}"${v('type') === t ? html` selected` : ''}>${t}</option>`)}</select>
<label for="p-tier">Tier</label><select id="p-tier" name="tier"><option value="">No tier</option>${TIERS.map((t) => html`<option value="${t}"${v('tier') === t ? html` selected` : ''}>${t}</option>`)}</select>
<label for="p-android">Android store product id</label><input id="p-android" name="android_store_product_id" type="text" maxlength="63" autocapitalize="none" value="${v('android_store_product_id')}">
<label for="p-ios">iOS store product id</label><input id="p-ios" name="ios_store_product_id" type="text" maxlength="200" autocapitalize="none" value="${v('ios_store_product_id')}">
<label for="p-entitlement">Entitlement</label><input id="p-entitlement" name="entitlement" type="text" maxlength="100" autocapitalize="none" placeholder="${DEFAULT_ENTITLEMENT}" aria-describedby="p-entitlement-hint" value="${v('entitlement')}">
<p id="p-entitlement-hint">What buying it unlocks, as your app asks for it (letters, digits, <code>.</code> <code>_</code> <code>:</code> <code>-</code>). Empty: <code>${DEFAULT_ENTITLEMENT}</code>.</p>
<fieldset><legend>Trial per platform, in days (empty: no trial)</legend>
${PLATFORMS.map((pl) => html`<label for="p-trial-${pl}">${PLATFORM_LABEL[pl]}</label><input id="p-trial-${pl}" name="trial_${pl}" type="number" min="0" max="365" step="1" inputmode="numeric" class="narrow" value="${trial[pl] === undefined ? '' : String(trial[pl])}">`)}
</fieldset>`;
}

/** The form's label of each field an operation may name (the trial rule names its fieldset). */
const FIELD_LABEL: Record<string, string> = {
  sku: 'SKU',
  name: 'Name',
  type: 'Type',
  tier: 'Tier',
  android_store_product_id: 'Android store product id',
  ios_store_product_id: 'iOS store product id',
  trial_per_platform: 'Trial',
  entitlement: 'Entitlement',
  country: 'Country',
  currency: 'Currency',
  amount: 'Price',
};

export function productsPage(services: Services): Router {
  const r = exactRouter();
  const run = <T>(ctx: Koa.Context, op: Operation, input: Record<string, unknown>) =>
    runOperation<T>(services, ctx, op as Operation, input);
  /** An operation's refusal, worded for the form: the problem after the label of the field at fault. */
  const formError = (r: { error: string; param?: string }) => {
    const label = r.param ? FIELD_LABEL[r.param] : undefined;
    return label && !r.error.startsWith(r.param!) ? `${label}: ${r.error}` : r.error;
  };

  const renderList = async (ctx: Koa.Context, msg: Msg = {}) => {
    const user = ctx.state.user!;
    const { data: rows } = await readThrough<{ data: ProductSummary[] }>(services, ctx, summarizeProducts as Operation);
    ctx.type = 'html';
    ctx.body = page({
      title: 'Products',
      user,
      csrf: ctx.state.csrf!,
      ...msg,
      // A role that may not change the catalogue sees no form for it (the server refuses anyway).
      body: html`${mayAct(user.role, '/products') ? html`<p><a href="/products/new">New product</a></p>` : ''}
<p>A product is on sale only after a sync writes it to the providers (<code>POST /v1/sync</code>, or <code>POST /v1/products/{id}/sync</code> for one product); past runs are under <a href="/sync-runs">Sync runs</a>.</p>
${
  rows.length === 0
    ? html`<p>No product yet.</p>`
    : html`<div class="scroll" role="region" tabindex="0" aria-label="Products"><table><caption class="skip">Products</caption>
<thead><tr><th scope="col">SKU</th><th scope="col">Name</th><th scope="col">Tier</th><th scope="col">Prices</th><th scope="col">Active</th><th scope="col">Changed</th></tr></thead><tbody>
${rows.map((p) => html`<tr><td><a href="/products/${p.id}">${p.sku}</a></td><td>${p.name}</td><td>${p.tier ?? '—'}</td><td>${p.prices}</td><td>${p.active ? 'Yes' : 'Retired'}</td><td>${formatDate(p.updated_at)}</td></tr>`)}
</tbody></table></div>`
}`,
    });
  };

  const renderNew = (ctx: Koa.Context, msg: Msg = {}, values: Record<string, unknown> = {}) => {
    ctx.type = 'html';
    ctx.body = page({
      title: 'New product',
      user: ctx.state.user,
      csrf: ctx.state.csrf!,
      ...msg,
      body: html`<form method="post" action="/products">${csrfField(ctx.state.csrf!)}${productFields(values, { sku: true })}
<button type="submit">Create product</button></form>`,
    });
  };

  const renderProduct = async (ctx: Koa.Context, id: string, msg: Msg = {}, values?: Record<string, unknown>) => {
    const user = ctx.state.user!;
    const p = await readThrough<Detail>(services, ctx, getProduct as Operation, { id });
    const writable = mayAct(user.role, `/products/${id}`);
    ctx.type = 'html';
    ctx.body = page({
      title: `Product ${p.sku}`,
      user,
      csrf: ctx.state.csrf!,
      ...msg,
      body: html`<p>${p.synced ? 'Synced to every provider it is on.' : 'Not synced: changes reach the providers with the next sync.'} <a href="/products">All products</a></p>
<h2>Details</h2>
${
  writable
    ? html`<form method="post" action="/products/${p.id}">${csrfField(ctx.state.csrf!)}${productFields(values ?? p, { sku: false })}
<button type="submit">Save product</button></form>`
    : html`<dl><dt>Name</dt><dd>${p.name}</dd><dt>Type</dt><dd>${p.type}</dd><dt>Tier</dt><dd>${p.tier ?? '—'}</dd>
<dt>Android store product id</dt><dd>${p.android_store_product_id ?? '—'}</dd><dt>iOS store product id</dt><dd>${p.ios_store_product_id ?? '—'}</dd>
<dt>Entitlement</dt><dd>${p.entitlement}</dd></dl>`
}
<h2>Prices</h2>
${
  p.pricing.length === 0
    ? html`<p>No price yet.</p>`
    : html`<div class="scroll" role="region" tabindex="0" aria-label="Prices"><table><caption class="skip">Prices</caption>
<thead><tr><th scope="col">Country</th><th scope="col">Currency</th><th scope="col">Price</th><th scope="col">Changed</th></tr></thead><tbody>
${p.pricing.map((pr) => html`<tr><td>${pr.country}</td><td>${pr.currency}</td><td>${formatMinorAmount(pr.amount_minor, pr.currency)}</td><td>${formatDate(pr.updated_at)}</td></tr>`)}
</tbody></table></div>`
}
${
  writable
    ? html`<form method="post" action="/products/${p.id}/prices">${csrfField(ctx.state.csrf!)}
<label for="pr-country">Country</label><input id="pr-country" name="country" type="text" required maxlength="2" autocapitalize="characters" aria-describedby="pr-country-hint">
<p id="pr-country-hint">Two letters (ISO 3166-1), e.g. <code>US</code>, <code>DE</code>.</p>
<label for="pr-currency">Currency</label><input id="pr-currency" name="currency" type="text" required maxlength="3" autocapitalize="characters" aria-describedby="pr-currency-hint">
<p id="pr-currency-hint">Three letters (ISO 4217), e.g. <code>USD</code>, <code>EUR</code>.</p>
<label for="pr-amount">Price</label><input id="pr-amount" name="amount" type="text" required inputmode="decimal" aria-describedby="pr-amount-hint">
<p id="pr-amount-hint">In the currency's own units, e.g. <code>9.99</code>. Setting a country and currency again replaces its price.</p>
<button type="submit">Set price</button></form>`
    : ''
}`,
    });
  };

  /**
   * The product id from the path (read with products.get, as GET /v1/products/{id}), or a 404
   * page: another tenant's id and a malformed one look the same.
   */
  const productId = async (ctx: Koa.Context): Promise<string | null> => {
    const found = await run<Detail>(ctx, getProduct as Operation, { id: ctx.params.id as string });
    if ('ok' in found) return found.ok.id;
    ctx.status = 404;
    ctx.type = 'html';
    ctx.body = page({
      title: 'Product not found',
      user: ctx.state.user,
      csrf: ctx.state.csrf!,
      error: 'There is no such product in your catalogue.',
      body: html`<p><a href="/products">All products</a></p>`,
    });
    return null;
  };

  r.get('/products', (ctx) =>
    renderList(ctx, ctx.query.created ? { notice: `Created ${String(ctx.query.created)}.` } : {}),
  );
  r.get('/products/new', (ctx) => renderNew(ctx));

  r.post('/products', async (ctx) => {
    const form = await readForm(ctx);
    const input = { sku: (form.get('sku') ?? '').trim(), ...productFromForm(form) };
    const made = await run<{ id: string }>(ctx, createProductOp as Operation, input);
    if ('ok' in made) return ctx.redirect(`/products/${made.ok.id}?created=1`);
    if (made.code === 'duplicate_sku')
      return renderNew(
        ctx,
        { error: `A product with SKU ${input.sku} already exists; open it from the product list to change it.` },
        input,
      );
    renderNew(ctx, { error: formError(made) }, input);
  });

  r.get('/products/:id', async (ctx) => {
    const id = await productId(ctx);
    if (id) await renderProduct(ctx, id, ctx.query.created ? { notice: 'Product created. Add its prices below.' } : {});
  });

  r.post('/products/:id', async (ctx) => {
    const form = await readForm(ctx);
    const id = await productId(ctx);
    if (!id) return;
    const input = productFromForm(form);
    const saved = await run(ctx, updateProductOp as Operation, { product_id: id, ...input });
    if ('error' in saved) return renderProduct(ctx, id, { error: formError(saved) }, input);
    await renderProduct(ctx, id, { notice: 'Saved. The change reaches the providers with the next sync.' });
  });

  r.post('/products/:id/prices', async (ctx) => {
    const form = await readForm(ctx);
    const id = await productId(ctx);
    if (!id) return;
    const country = (form.get('country') ?? '').trim().toUpperCase();
    const currency = (form.get('currency') ?? '').trim().toUpperCase();
    const amountText = form.get('amount') ?? '';
    // The form takes major units; the operation takes minor units. A text that is no amount in
    // the currency never becomes an operation call, as a body that is no JSON never does on REST.
    const amount = parseMajorAmount(amountText, currency);
    if (amount === null) {
      ctx.status = 400;
      return renderProduct(ctx, id, {
        error: `"${amountText.slice(0, 40)}" is not a price in ${currency}: use digits with at most the currency's decimals, e.g. 9.99`,
      });
    }
    const set = await run<{ changed: number }>(ctx, setPricingOp as Operation, {
      product_id: id,
      prices: [{ country, currency, amount }],
    });
    if ('error' in set) return renderProduct(ctx, id, { error: set.error });
    await renderProduct(ctx, id, {
      notice: set.ok.changed
        ? `Price for ${country} set to ${formatMinorAmount(amount, currency)}.`
        : `${country} already costs ${formatMinorAmount(amount, currency)}; nothing changed.`,
    });
  });

  return r;
}
