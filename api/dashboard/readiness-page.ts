import type Router from '@koa/router';
import { exactRouter } from '../router';
import type { z } from 'zod';
import type { Services } from '../../operations/services';
import { getReadiness, type readinessBody } from '../../operations/readiness/get';
import type { Operation } from '../../operations/types';
import { html } from './html';
import { page } from './layout';
import { readThrough } from './run-operation';

/** The rows of GET /v1/readiness, from the same operation (so the same rule), with manual steps as a checklist. */
export function readinessPage(services: Services): Router {
  const r = exactRouter();
  r.get('/readiness', async (ctx) => {
    const report = await readThrough<z.infer<typeof readinessBody>>(services, ctx, getReadiness as Operation);
    const yesNo = (b: boolean) => (b ? 'Ready' : 'Not ready');
    ctx.type = 'html';
    ctx.body = page({
      title: 'Readiness',
      user: ctx.state.user,
      csrf: ctx.state.csrf!,
      body: html`<p>${report.summary.live_ready} of ${report.summary.total} providers live-ready, ${report.summary.test_ready} test-ready;
${report.summary.needs_manual_action} need a person. Same rows as <code>GET /v1/readiness</code>.</p>
<div class="scroll" role="region" tabindex="0" aria-label="Readiness per provider"><table><caption class="skip">Readiness per provider</caption>
<thead><tr><th scope="col">Provider</th><th scope="col">Test</th><th scope="col">Live</th><th scope="col">Next step</th></tr></thead><tbody>
${report.providers.map(
  (p) => html`<tr><td>${p.provider}</td><td>${yesNo(p.test_ready)}<br><small>${p.test_detail}</small></td>
<td>${yesNo(p.live_ready)}<br><small>${p.live_detail}</small></td><td>${p.human_action ?? 'Nothing: ready.'}</td></tr>`,
)}
</tbody></table></div>
${report.providers
  .filter((p) => p.manual_steps?.length)
  .map(
    (p) => html`<section aria-labelledby="steps-${p.provider}">
<h2 id="steps-${p.provider}">Manual steps for ${p.provider}</h2>
${p.console_url ? html`<p>Where: <a href="${p.console_url}">${p.console_url}</a></p>` : ''}
<ol>${p.manual_steps!.map((step, i) => html`<li><label><input type="checkbox" name="step-${p.provider}-${i}"> ${step}</label></li>`)}</ol>
<p><small>The checklist is for you to tick as you go; a step turns green here only when the service sees its evidence.</small></p>
</section>`,
  )}`,
    });
  });
  return r;
}
