import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import type { Services } from '../../operations/services';
import { getChart } from '../../operations/charts/get';
import { listedCharts } from '../../operations/charts/schema';
import { chartCsv } from '../../domain/charts/csv';
import type { ChartData, ChartSeries } from '../../domain/charts/chart-list';
import { formatMinorAmount } from '../../domain/catalogue';
import { MODES, PROVIDERS } from '../../domain/providers';
import { RESOLUTIONS } from '../../domain/charts/periods';
import { html, type SafeHtml } from './html';
import { page } from './layout';
import { periodChart } from './charts/period-chart';
import { runOperation } from './run-operation';

/** The query a chart page takes: the parameters of GET /v1/charts/{name}, empty form fields left out. */
const PARAMS = ['from', 'to', 'resolution', 'mode', 'provider', 'product', 'country', 'currency'] as const;

function chartInput(ctx: Koa.Context, name: string): Record<string, unknown> {
  const input: Record<string, unknown> = { name };
  for (const p of PARAMS) {
    const v = ctx.query[p];
    if (v !== undefined && v !== '') input[p] = v;
  }
  return input;
}

type Answer = ChartData & {
  name: string;
  title: string;
  description: string;
  resolution: string;
  from: string;
  to: string;
  mode: string;
  filters: { provider: string | null; product: string | null; country: string | null };
  as_of: string;
  currency: string | null;
  unconverted?: string[];
};

/** How a series' values read: counts as they are, money in its currency, shares as percentages. */
function formatOf(s: Pick<ChartSeries, 'unit' | 'currency'>): (v: number) => string {
  if (s.unit === 'money' && s.currency) return (v) => formatMinorAmount(Math.round(v), s.currency!);
  if (s.unit === 'ratio') return (v) => `${(v * 100).toFixed(1)} %`;
  return (v) => String(Math.round(v * 100) / 100);
}

/** One drawing per currency (money is never drawn on one axis with another currency), one for counts, one for rates. */
function drawings(a: Answer): SafeHtml[] {
  const groups = new Map<string, ChartSeries[]>();
  for (const s of a.series) {
    const key = s.unit === 'money' ? `money ${s.currency}` : s.unit;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  if (groups.size === 0)
    return [periodChart({ id: 'chart-0', title: a.title, periods: a.periods, series: [], format: String })];
  return [...groups.entries()].map(([key, series], i) =>
    periodChart({
      id: `chart-${i}`,
      title: key.startsWith('money')
        ? `${a.title}, ${series[0].currency}`
        : groups.size > 1
          ? `${a.title}, ${key === 'ratio' ? 'rates' : 'counts'}`
          : a.title,
      periods: a.periods,
      series: series.map((s) => ({ label: s.label, values: s.values })),
      format: formatOf(series[0]),
    }),
  );
}

function cohortTable(a: Answer): SafeHtml {
  const cohorts = a.cohorts ?? [];
  const width = cohorts.reduce((w, c) => Math.max(w, c.values.length), 0);
  return html`<div class="scroll" role="region" tabindex="0" aria-label="Retention by cohort"><table><caption>Share of each month's new paying subscriptions still paying, by month since</caption>
<thead><tr><th scope="col">Cohort</th><th scope="col">Size</th>${Array.from({ length: width }, (_, k) => html`<th scope="col">Month ${k}</th>`)}</tr></thead>
<tbody>${cohorts.map((c) => html`<tr><th scope="row">${c.cohort}</th><td>${c.size}</td>${Array.from({ length: width }, (_, k) => html`<td>${c.values[k] === null || c.values[k] === undefined ? '—' : `${(c.values[k]! * 100).toFixed(0)} %`}</td>`)}</tr>`)}</tbody></table></div>`;
}

function filterForm(name: string, q: Record<string, unknown>): SafeHtml {
  const v = (p: string) => (typeof q[p] === 'string' ? (q[p] as string) : '');
  const select = (p: string, options: readonly string[], any: string) =>
    html`<label for="f-${p}">${p}</label><select id="f-${p}" name="${p}"><option value="">${any}</option>${options.map((o) => html`<option value="${o}" ${v(p) === o ? 'selected' : ''}>${o}</option>`)}</select>`;
  const text = (p: string, hint: string) =>
    html`<label for="f-${p}">${p}</label><input id="f-${p}" name="${p}" type="text" value="${v(p)}" placeholder="${hint}">`;
  return html`<form method="get" action="/charts/${name}" aria-label="Chart settings">
${text('from', 'YYYY-MM-DD')} ${text('to', 'YYYY-MM-DD')}
${select('resolution', RESOLUTIONS, 'month (default)')} ${select('mode', MODES, 'live (default)')}
${select('provider', PROVIDERS, 'any')} ${text('product', 'SKU or id')} ${text('country', 'e.g. DE')}
${text('currency', 'e.g. USD: convert with your rates')}
<button type="submit">Show</button></form>`;
}

export function chartsPage(services: Services): Router {
  const r = exactRouter();
  r.get('/charts', async (ctx) => {
    ctx.type = 'html';
    ctx.body = page({
      title: 'Charts',
      user: ctx.state.user,
      csrf: ctx.state.csrf!,
      body: html`<p>Each chart also answers at <code>GET /v1/charts/{name}</code> and as a CSV download. What each counts: live or test mode, never both; grants are not revenue; money per currency, or converted into one currency with the exchange rates you provide (never mixed without a rate).</p>
<ul>${listedCharts().map((c) => html`<li><a href="/charts/${c.name}">${c.title}</a>: ${c.description}</li>`)}</ul>`,
    });
  });

  const load = async (ctx: Koa.Context) => {
    const input = chartInput(ctx, ctx.params.name);
    return { input, result: await runOperation<Answer>(services, ctx, getChart, input) };
  };

  r.get('/charts/:name/csv', async (ctx) => {
    const { result } = await load(ctx);
    if ('error' in result) {
      ctx.type = 'text';
      ctx.body = result.error;
      return;
    }
    ctx.set('Content-Disposition', `attachment; filename="${result.ok.name}-${result.ok.from}-${result.ok.to}.csv"`);
    ctx.type = 'text/csv; charset=utf-8';
    ctx.body = chartCsv(result.ok);
  });

  r.get('/charts/:name', async (ctx) => {
    const { input, result } = await load(ctx);
    const query = new URLSearchParams(
      Object.entries(input).filter((e): e is [string, string] => e[0] !== 'name' && typeof e[1] === 'string'),
    ).toString();
    ctx.type = 'html';
    if ('error' in result) {
      ctx.body = page({
        title: result.code === 'not_found' ? 'No such chart' : 'Chart',
        user: ctx.state.user,
        csrf: ctx.state.csrf!,
        error: result.param ? `${result.param}: ${result.error}` : result.error,
        body: html`${result.code === 'not_found' ? '' : filterForm(ctx.params.name, input)}<p><a href="/charts">All charts</a></p>`,
      });
      return;
    }
    const a = result.ok;
    ctx.body = page({
      title: a.title,
      user: ctx.state.user,
      csrf: ctx.state.csrf!,
      body: html`<p>${a.description} ${a.mode === 'test' ? 'Test mode: test purchases only.' : 'Live mode: real purchases only.'} From ${a.from} to ${a.to}, by ${a.resolution}.</p>
${filterForm(a.name, input)}
${a.currency ? html`<p>Money in ${a.currency}, each period at your exchange rate for it.${a.unconverted?.length ? html` Shown apart, unconverted, for lack of a rate in some period: ${a.unconverted.join(', ')}.` : ''}</p>` : ''}
<p><small>Figures as of ${a.as_of.slice(0, 16).replace('T', ' ')} UTC.</small></p>
<p><a href="/charts/${a.name}/csv${query ? `?${query}` : ''}" download>Download CSV</a> · <a href="/charts">All charts</a></p>
${a.cohorts ? cohortTable(a) : ''}
<div class="charts">${drawings(a)}</div>
<p><small>Definitions: what counts, in which currency, and how test mode and grants are treated are written per chart in the service's chart documentation; <code>GET /v1/charts/${a.name}</code> answers the same figures.</small></p>`,
    });
  });
  return r;
}
