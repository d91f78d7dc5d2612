import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import type { Services } from '../../operations/services';
import { withTenant } from '../../db/tenant-tx';
import { sessionSignInFailures, type SignInFailures } from '../../db/sign-in-failures';
import type { OverviewFigures } from '../../db/overview';
import type { readinessReport } from '../../domain/readiness';
import { getOverview } from '../../operations/overview/get';
import type { Operation } from '../../operations/types';
import { readThrough } from './run-operation';
import { formatMinorAmount } from '../../domain/catalogue';
import { MODES, type Mode } from '../../domain/providers';
import { formatDate, html, type SafeHtml } from './html';
import type { RepairCounts } from '../../db/overview-repairs';
import type { Lag, LatencyFigures } from '../../db/overview-latency';
import { page } from './layout';
import { lineChart } from './charts/line-chart';
import { barChart } from './charts/bar-chart';
import { overviewModel, SERIES, type ProviderNow } from './overview-model';

const WINDOWS = [30, 90] as const;
const DEFAULT_MODE: Mode = 'live';

/** Where each figure's records are listed, with the list's own filters (those of GET /v1/…). */
function listHref(path: string, filters: Record<string, string | undefined>): string {
  const q = new URLSearchParams(Object.entries(filters).filter((e): e is [string, string] => e[1] !== undefined));
  return `${path}?${q}`;
}

type Figure = {
  key: keyof Omit<ProviderNow, 'provider'>;
  label: string;
  href: (mode: Mode, provider?: string) => string;
};

/**
 * The "now" figures and the list each counts. Subscriptions and deliveries filter by mode;
 * the entitlements list has no mode filter (GET /v1/entitlements), so its links filter by
 * provider and state only. The 30-day figures link to the records in that status today.
 */
const FIGURES: Figure[] = [
  {
    key: 'active',
    label: 'Active subscriptions',
    href: (mode, provider) => listHref('/subscribers', { status: 'active', provider, mode }),
  },
  {
    key: 'trialing',
    label: 'In trial',
    href: (mode, provider) => listHref('/subscribers', { status: 'trialing', provider, mode }),
  },
  {
    key: 'past_due',
    label: 'Past due',
    href: (mode, provider) => listHref('/subscribers', { status: 'past_due', provider, mode }),
  },
  {
    key: 'entitlements_active',
    label: 'Active entitlements',
    href: (_m, provider) => listHref('/entitlements', { state: 'active', provider }),
  },
  {
    key: 'grace_period',
    label: 'In grace period',
    href: (_m, provider) => listHref('/entitlements', { state: 'grace_period', provider }),
  },
  {
    key: 'cancellations_30d',
    label: 'Cancellations, 30 days',
    href: (mode, provider) => listHref('/subscribers', { status: 'canceled', provider, mode }),
  },
  {
    key: 'refunds_30d',
    label: 'Refunds, 30 days',
    href: (mode, provider) => listHref('/subscribers', { status: 'refunded', provider, mode }),
  },
  {
    key: 'webhook_failures_24h',
    label: 'Webhook failures, 24 h',
    href: (mode, provider) => listHref('/webhook-deliveries', { status: 'failed', provider, mode }),
  },
];

class BadQuery extends Error {}

function readQuery(ctx: Koa.Context): { mode: Mode; days: number } {
  const mode = ctx.query.mode ?? DEFAULT_MODE;
  const days = ctx.query.days ?? '30';
  if (typeof mode !== 'string' || !(MODES as readonly string[]).includes(mode))
    throw new BadQuery('mode must be "test" or "live".');
  if (typeof days !== 'string' || !WINDOWS.map(String).includes(days)) throw new BadQuery('days must be 30 or 90.');
  return { mode: mode as Mode, days: Number(days) };
}

/** Links that switch one setting and keep the other; the current one is marked for screen readers too. */
function switcher(label: string, options: { text: string; href: string; current: boolean }[]): SafeHtml {
  return html`<nav class="switch" aria-label="${label}"><span>${label}:</span><ul>${options.map((o) => html`<li><a href="${o.href}" ${o.current ? html`aria-current="page"` : ''}>${o.text}</a></li>`)}</ul></nav>`;
}

/**
 * Reconciliation repairs (docs/reconciliation.md): what a lost or late notification got wrong
 * and the service put right from the provider's own state, per provider, each linked to its list.
 */
function repairsHealth(repairs: RepairCounts[]): SafeHtml {
  const sum = (k: 'last_24h' | 'last_7d') => repairs.reduce((a, r) => a + r[k], 0);
  return html`<h3>Repairs from the providers</h3>
<p id="repairs-summary"><a href="/reconciliations">${sum('last_24h')} in the last 24 hours, ${sum('last_7d')} in the last 7 days</a>: subscriptions whose state at the provider differed from ours (a notification lost or late) and were put right. Both modes.</p>
${
  repairs.length
    ? html`<div class="scroll" role="region" tabindex="0" aria-label="Repairs by provider"><table><caption class="skip">Repairs by provider</caption>
<thead><tr><th scope="col">Provider</th><th scope="col">Last 24 hours</th><th scope="col">Last 7 days</th></tr></thead>
<tbody>${repairs.map((r) => html`<tr><th scope="row"><a href="/reconciliations?provider=${r.provider}">${r.provider}</a></th><td>${r.last_24h}</td><td>${r.last_7d}</td></tr>`)}</tbody></table></div>`
    : ''
}`;
}

/** Seconds as people read them: milliseconds under one second, seconds with a decimal under a minute. */
function seconds(s: number): string {
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.round(s / 60)} min`;
}

function lagCell(lag: Lag): SafeHtml {
  return lag.p95 === null ? html`<td>—</td><td>0</td>` : html`<td>${seconds(lag.p95)}</td><td>${lag.n}</td>`;
}

/**
 * The tenant's own lags of the last hour (docs/operations.md, "Objectives"): a payment received to
 * premium, to the record written, and an event of ours to its delivery at the tenant's endpoints.
 */
function latencyHealth(l: LatencyFigures): SafeHtml {
  const purchases = l.premium.n + l.authoritative.n;
  return html`<h3>Time to premium, last hour</h3>
${
  purchases + l.outbound.n === 0
    ? html`<p id="latency-empty">No purchases in the last hour, and no event delivered to your endpoints.</p>`
    : html`${purchases === 0 ? html`<p id="latency-empty">No purchases in the last hour.</p>` : ''}<div class="scroll" role="region" tabindex="0" aria-label="Time to premium, last hour"><table id="latency"><caption class="skip">Time to premium over the last hour, 95th percentile</caption>
<thead><tr><th scope="col">From → to</th><th scope="col">95th percentile</th><th scope="col">Measured</th></tr></thead>
<tbody><tr id="latency-premium"><th scope="row">Payment received → premium (at receipt)</th>${lagCell(l.premium)}</tr>
<tr id="latency-authoritative"><th scope="row">Payment received → subscription and entitlement written</th>${lagCell(l.authoritative)}</tr>
<tr id="latency-outbound"><th scope="row">Event → delivered to your endpoints</th>${lagCell(l.outbound)}</tr></tbody></table></div>`
}
<p><small>Both modes. Premium at receipt: web payments whose notification granted access as it arrived; the record written follows once the provider's events are applied.</small></p>`;
}

/** What the log-in that opened this session found: wrong passwords for the account since the one before. */
function signInNotice(f: SignInFailures): string {
  const attempts = f.attempts === 1 ? '1 failed sign-in attempt' : `${f.attempts} failed sign-in attempts`;
  const addresses = f.addresses === 1 ? '1 address' : `${f.addresses} addresses`;
  return `${attempts} since your last login, from ${addresses}. If they were not yours, someone tried to guess your password.`;
}

export function overviewPage(services: Services): Router {
  const r = exactRouter();
  r.get('/overview', async (ctx) => {
    const user = ctx.state.user!;
    let query: { mode: Mode; days: number };
    try {
      query = readQuery(ctx);
    } catch (e) {
      if (!(e instanceof BadQuery)) throw e;
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = page({
        title: 'Overview',
        user,
        csrf: ctx.state.csrf!,
        error: e.message,
        body: html`<p><a href="/overview">Back to the overview</a></p>`,
      });
      return;
    }
    const { mode, days } = query;
    // Every figure from the overview operation, as the person (one tenant transaction: one
    // snapshot, one now()); readiness by the rule of GET /v1/readiness, on the same facts.
    const { figures, readiness, repairs, latency } = await readThrough<{
      figures: OverviewFigures;
      readiness: ReturnType<typeof readinessReport>;
      repairs: RepairCounts[];
      latency: LatencyFigures;
    }>(services, ctx, getOverview as Operation, { mode, days });
    // What the log-in that opened this session found: a sign-in mechanic, not a figure.
    const failedSignIns = await withTenant(services.db, user.tenant_id, (trx) =>
      sessionSignInFailures(trx, user.session_id),
    );
    const m = overviewModel(figures, figures.today, days);
    const run = figures.lastSyncRun;
    const self = (q: { mode?: Mode; days?: number }) => `/overview?mode=${q.mode ?? mode}&days=${q.days ?? days}`;

    ctx.type = 'html';
    ctx.body = page({
      title: 'Overview',
      user,
      csrf: ctx.state.csrf!,
      notice: failedSignIns && signInNotice(failedSignIns),
      body: html`<div class="switches">
${switcher('Mode', MODES.map((x) => ({ text: x === 'test' ? 'Test' : 'Live', href: self({ mode: x }), current: x === mode })).reverse())}
${switcher(
  'Window',
  WINDOWS.map((d) => ({ text: `${d} days`, href: self({ days: d }), current: d === days })),
)}
</div>
<p>${mode === 'test' ? 'Test mode: sandbox purchases and test-mode records only.' : 'Live mode: real purchases only.'} Figures as of ${figures.today} (UTC); each links to the records it counts.</p>

<section aria-labelledby="now">
<h2 id="now">Now</h2>
<ul class="tiles">
${FIGURES.map((f) => html`<li><a href="${f.href(mode)}"><span class="figure">${m.total[f.key]}</span> <span>${f.label}</span></a></li>`)}
<li><a href="${listHref('/entitlements', { state: 'active', source: 'grant' })}"><span class="figure" id="granted-figure">${figures.activeGrants}</span> <span>Granted by hand (not paid, either mode)</span></a></li>
</ul>
<h3>Monthly recurring revenue</h3>
${
  m.mrr.length === 0
    ? html`<p>No active subscription with a priced product.</p>`
    : html`<ul class="tiles">${m.mrr.map((x) => html`<li><a href="${listHref('/subscribers', { status: 'active', mode })}"><span class="figure">${formatMinorAmount(x.mrr_minor, x.currency)}</span> <span>MRR in ${x.currency}, ${x.subscriptions} subscription${x.subscriptions === 1 ? '' : 's'}</span></a></li>`)}</ul>`
}
<p><small>From the active subscriptions and their product's price (its first price, as records do not carry the buyer's currency), per month by tier. Currencies are not converted: no rate source is configured.${m.unpriced ? ` ${m.unpriced} active subscription${m.unpriced === 1 ? ' has' : 's have'} no priced product and ${m.unpriced === 1 ? 'is' : 'are'} not counted.` : ''}</small></p>
${
  m.now.length === 0
    ? html`<p>No subscription, entitlement or delivery in ${mode} mode yet.</p>`
    : html`${barChart({ id: 'now-active', title: 'Active subscriptions by provider', bars: m.now.map((p) => ({ label: p.provider, value: p.active, href: listHref('/subscribers', { status: 'active', provider: p.provider, mode }) })) })}
<div class="scroll" role="region" tabindex="0" aria-label="Now, by provider"><table><caption>Now, by provider</caption>
<thead><tr><th scope="col">Provider</th>${FIGURES.map((f) => html`<th scope="col">${f.label}</th>`)}</tr></thead>
<tbody>${m.now.map((p) => html`<tr><th scope="row">${p.provider}</th>${FIGURES.map((f) => html`<td><a href="${f.href(mode, p.provider)}" aria-label="${f.label}, ${p.provider}: ${p[f.key]}">${p[f.key]}</a></td>`)}</tr>`)}</tbody>
</table></div>`
}
</section>

<section aria-labelledby="over-time">
<h2 id="over-time">Over the last ${days} days</h2>
<div class="charts">
${SERIES.map((s) => lineChart({ id: `chart-${s.key.replace(/_/g, '-')}`, title: s.title, days: m.days, series: m.series[s.key] }))}
</div>
<p><small>Daily, UTC, from the moves each subscription record makes (a subscription from before its changes were kept counts from the day it was created).</small></p>
</section>

<section aria-labelledby="health">
<h2 id="health">Health</h2>
<h3>Readiness, ${mode}</h3>
${
  readiness.providers.length === 0
    ? html`<p>No provider connected. <a href="/providers">Connect one</a>.</p>`
    : html`<div class="scroll" role="region" tabindex="0" aria-label="Readiness, ${mode}"><table><caption class="skip">Readiness in ${mode} mode</caption>
<thead><tr><th scope="col">Provider</th><th scope="col">${mode === 'test' ? 'Test' : 'Live'}</th><th scope="col">Why</th></tr></thead>
<tbody>${readiness.providers.map((p) => html`<tr><th scope="row">${p.provider}</th><td>${(mode === 'test' ? p.test_ready : p.live_ready) ? 'Ready' : 'Not ready'}</td><td>${mode === 'test' ? p.test_detail : p.live_detail}</td></tr>`)}</tbody></table></div>`
}
<p><a href="/readiness">Readiness in full</a> (the rows of <code>GET /v1/readiness</code>).</p>
<h3>Inbound webhooks</h3>
<p><a href="${listHref('/webhook-deliveries', { status: 'failed', mode })}">${m.total.webhook_failures_24h} failed in the last 24 hours</a>${m.total.webhook_failures_24h ? html` (${m.now.filter((p) => p.webhook_failures_24h).map((p, i) => html`${i ? ', ' : ''}<a href="${listHref('/webhook-deliveries', { status: 'failed', provider: p.provider, mode })}">${p.provider}: ${p.webhook_failures_24h}</a>`)})` : ''}.</p>
${repairsHealth(repairs)}
${latencyHealth(latency)}
<h3>Last sync run</h3>
${
  run
    ? html`<p><strong>${run.status}</strong>, ${run.kind} started ${formatDate(run.created_at)}, ${run.finished_at ? html`finished ${formatDate(run.finished_at)}` : 'not finished'}.
Reference <code>${run.workflow_id ?? '—'}</code> (for support) · <a href="/sync-runs">All sync runs</a></p>`
    : html`<p>No sync has run yet. <a href="/sync-runs">Sync runs</a></p>`
}
</section>`,
    });
  });
  return r;
}
