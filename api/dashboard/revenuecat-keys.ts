import type Router from '@koa/router';
import type Koa from 'koa';
import type { z } from 'zod';
import { parkSecret } from '../../db/session-secret';
import type { Role } from '../../domain/roles';
import { REVENUECAT_PLATFORMS } from '../../domain/revenuecat';
import { createRevenueCatKeyOp } from '../../operations/revenuecat-keys/create';
import { listRevenueCatKeysOp } from '../../operations/revenuecat-keys/list';
import { revokeRevenueCatKeyOp } from '../../operations/revenuecat-keys/revoke';
import type { revenuecatKeyRow } from '../../operations/revenuecat-keys/schema';
import type { Services } from '../../operations/services';
import { readForm } from './form';
import { formatDate, html } from './html';
import { csrfField, page } from './layout';
import { mayAct } from './page-access';
import { readThrough, runOperation } from './run-operation';
import { SESSION_COOKIE } from './session';

type Listed = z.infer<typeof revenuecatKeyRow>;

const BASE = '/settings/developer-api/revenuecat-keys';
const PLATFORM_LABEL = { web: 'Web', ios: 'iOS', android: 'Android' } as const;

/** The keys, through revenuecat_keys.list run as the person (their role's read, as a REST call would be). */
export const listRevenueCatKeysFor = async (services: Services, ctx: Koa.Context) =>
  (await readThrough<{ data: Listed[] }>(services, ctx, listRevenueCatKeysOp)).data;

function keyTable(keys: Listed[], csrf: string, canRevoke: boolean) {
  if (keys.length === 0) return html`<p>No keys for RevenueCat’s SDKs yet.</p>`;
  return html`<div class="scroll" role="region" tabindex="0" aria-label="Keys for RevenueCat’s SDKs"><table><caption class="skip">Keys for RevenueCat’s SDKs</caption><thead><tr>
<th scope="col">Key</th><th scope="col">Platform</th><th scope="col">Mode</th><th scope="col">App</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th></tr></thead><tbody>
${keys.map(
  (
    k,
  ) => html`<tr><td><code>${k.key_hint}</code></td><td>${PLATFORM_LABEL[k.platform]}</td><td>${k.mode}</td><td>${k.app_name}</td><td>${formatDate(k.created_at)}</td><td>${k.last_used_at ? formatDate(k.last_used_at) : 'Never'}</td>
<td>${
    k.revoked_at
      ? html`Revoked ${formatDate(k.revoked_at)}`
      : canRevoke
        ? html`<form class="inline" method="post" action="${BASE}/${k.id}/revoke">${csrfField(csrf)}<button type="submit" aria-label="Revoke ${PLATFORM_LABEL[k.platform]} ${k.mode} key ${k.key_hint}" class="flush">Revoke</button></form>`
        : 'Active'
  }</td></tr>`,
)}
</tbody></table></div>`;
}

/**
 * The Developer API page's section for apps that ship RevenueCat's SDKs: they keep them and set
 * `proxyURL` to this service (docs/migrate-from-revenuecat.md). Keys are listed by hint; a new
 * one is shown once. A role that may not mint sees no form (the operation refuses anyway).
 */
export function revenuecatKeysSection(p: {
  keys: Listed[];
  csrf: string;
  role: Role;
  apiUrl: string;
  created?: string;
  /** false on the section's own page, whose title says it already. */
  titled?: boolean;
}) {
  const canMint = mayAct(p.role, BASE);
  return html`${p.titled === false ? '' : html`<h2>Keys for RevenueCat’s SDKs</h2>`}
<p>An app that already ships RevenueCat’s SDK moves here without a release: set its <code>proxyURL</code> to <code>${p.apiUrl}/revenuecat</code> and give it one of these keys. <code>rcb_sb_…</code> and <code>appl_…</code>/<code>goog_…</code> test keys see sandbox purchases, live keys real ones.</p>
${
  p.created
    ? html`<section aria-labelledby="new-rc-key"><h3 id="new-rc-key">Your new key</h3>
<p>Copy it now: only its start is kept, so it cannot be shown again.</p>
<p><label for="new-rc-key-value">Key for RevenueCat’s SDK</label>
<input id="new-rc-key-value" type="text" readonly value="${p.created}" class="secret">
<button type="button" class="secondary" data-copy="new-rc-key-value">Copy</button></p></section>`
    : ''
}
${
  canMint
    ? html`<form method="post" action="${BASE}">${csrfField(p.csrf)}
<label for="rc-platform">Platform</label><select id="rc-platform" name="platform">${REVENUECAT_PLATFORMS.map((pl) => html`<option value="${pl}">${PLATFORM_LABEL[pl]}</option>`)}</select>
<label for="rc-mode">Mode</label><select id="rc-mode" name="mode"><option value="test">test</option><option value="live">live</option></select>
<button type="submit">Create RevenueCat key</button></form>`
    : ''
}
${keyTable(p.keys, p.csrf, canMint)}`;
}

/**
 * The section's two writes, revenuecat_keys.create and .revoke, run as the signed-in person (their
 * audit rows, their role's ceiling). `render` draws the whole Developer API page again.
 */
export function revenuecatKeyRoutes(
  r: Router,
  services: Services,
  render: (ctx: Koa.Context, extra: { notice?: string; error?: string }) => Promise<void>,
): void {
  // The section alone, for every role that reads the apps (the Developer API page is for those who manage keys).
  r.get(BASE, async (ctx) => {
    const user = ctx.state.user!;
    ctx.type = 'html';
    ctx.body = page({
      title: 'Keys for RevenueCat’s SDKs',
      user,
      csrf: ctx.state.csrf!,
      body: revenuecatKeysSection({
        keys: await listRevenueCatKeysFor(services, ctx),
        csrf: ctx.state.csrf!,
        role: user.role,
        apiUrl: services.config.publicApiUrl,
        titled: false,
      }),
    });
  });

  r.post(BASE, async (ctx) => {
    const form = await readForm(ctx);
    const made = await runOperation<{ public_key: string; platform: keyof typeof PLATFORM_LABEL; mode: string }>(
      services,
      ctx,
      createRevenueCatKeyOp,
      { platform: form.get('platform') ?? '', ...(form.get('mode') ? { mode: form.get('mode') } : {}) },
    );
    if ('error' in made) return render(ctx, { error: made.error });
    // Post/redirect/get, as for secret keys: shown once by the GET, then gone.
    await parkSecret(services.db, ctx.cookies.get(SESSION_COOKIE)!, {
      name: `${PLATFORM_LABEL[made.ok.platform]} ${made.ok.mode} key for RevenueCat’s SDK`,
      secret: made.ok.public_key,
      kind: 'revenuecat_key',
    });
    ctx.status = 303;
    ctx.redirect('/settings/developer-api');
  });

  r.post(`${BASE}/:id/revoke`, async (ctx) => {
    await readForm(ctx);
    const revoked = await runOperation<{ key_hint: string }>(services, ctx, revokeRevenueCatKeyOp, {
      id: ctx.params.id,
    });
    if ('error' in revoked) return render(ctx, { error: revoked.error });
    await render(ctx, { notice: `Key ${revoked.ok.key_hint} revoked. Apps using it are refused from now on.` });
  });
}
