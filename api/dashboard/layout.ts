import { html, type SafeHtml } from './html';
import type { SessionUser } from '../../db/dashboard-users';
import { mayOpen } from './page-access';

/** Served as /assets/dashboard.css (the CSP allows styles from 'self' only, no inline ones). */
export const STYLE = `
*{box-sizing:border-box}
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}
header{background:#15365e;color:#fff;padding:.5rem 1rem}
header a{color:#fff}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
main{max-width:60rem;margin:0 auto;padding:1rem}
a{color:#0b4f9c}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid #e66100;outline-offset:2px}
label{display:block;font-weight:600;margin-top:.75rem}
fieldset label{display:inline-flex;gap:.3rem;font-weight:400;margin:.2rem 1rem .2rem 0;align-items:center}
input[type=text],input[type=email],input[type=password],input[type=number],input[type=url],select,textarea{display:block;width:100%;max-width:30rem;padding:.45rem;font:inherit;border:1px solid #555;border-radius:4px}
textarea{min-height:6rem}
button{font:inherit;padding:.45rem 1rem;margin-top:.75rem;border:1px solid #0b4f9c;background:#0b4f9c;color:#fff;border-radius:4px;cursor:pointer}
button.secondary{background:#fff;color:#0b4f9c}
table{border-collapse:collapse;width:100%}
.scroll{overflow-x:auto;margin:1rem 0}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ccc;vertical-align:top}
code,.secret{background:#f0f0f0;padding:0 .3em;word-break:break-all}
.notice{border-left:4px solid #0b4f9c;background:#eef4fb;padding:.5rem 1rem}
.error{border-left:4px solid #b00020;background:#fdecee;padding:.5rem 1rem}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;color:#000;padding:.5rem}
form.inline{display:inline}
button.flush{margin:0}
header button.flush{padding:.1rem .6rem}
input.narrow{width:6rem}
pre{background:#f0f0f0;padding:.75rem;overflow-x:auto}
.switches{display:flex;flex-wrap:wrap;gap:.5rem 2rem}
.switch{display:flex;gap:.5rem;align-items:baseline}.switch ul{list-style:none;margin:0;padding:0;display:flex;gap:.75rem}
.switch a[aria-current]{font-weight:700;color:#1b1b1b;text-decoration:none;border-bottom:3px solid #0b4f9c}
ul.tiles{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:.5rem}
ul.tiles a{display:block;border:1px solid #ccc;border-radius:4px;padding:.5rem;text-decoration:none;color:#1b1b1b;height:100%}
ul.tiles a:hover{border-color:#0b4f9c}ul.tiles .figure{display:block;font-size:1.5rem;font-weight:700;color:#0b4f9c}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,24rem),1fr));gap:0 1rem;align-items:start}
figure.chart{margin:1rem 0;border:1px solid #ccc;border-radius:4px;padding:.5rem;min-width:0}
figure.chart figcaption{font-weight:600}figure.chart svg{display:block}
ul.legend{list-style:none;padding:0;margin:.25rem 0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
ul.bars{list-style:none;padding:0;margin:0}ul.bars a{display:grid;grid-template-columns:7.5rem 1fr 4rem;gap:.5rem;align-items:center;color:#1b1b1b;text-decoration:none;padding:.15rem 0}
ul.bars .bar-value{text-align:right;font-weight:600}
`;

export interface PageInput {
  title: string;
  user?: SessionUser;
  csrf: string;
  body: SafeHtml;
  notice?: string;
  error?: string;
}

const NAV: { href: string; label: string }[] = [
  { href: '/overview', label: 'Overview' },
  { href: '/charts', label: 'Charts' },
  { href: '/settings/developer-api', label: 'Developer API' },
  { href: '/settings/developer-api/revenuecat-keys', label: 'RevenueCat keys' },
  { href: '/providers', label: 'Providers' },
  { href: '/products', label: 'Products' },
  { href: '/paywall', label: 'Paywall' },
  { href: '/readiness', label: 'Readiness' },
  { href: '/sync-runs', label: 'Sync runs' },
  { href: '/customers', label: 'Customers' },
  { href: '/imports', label: 'Imports' },
  { href: '/subscribers', label: 'Subscribers' },
  { href: '/entitlements', label: 'Entitlements' },
  { href: '/webhook-deliveries', label: 'Webhook deliveries' },
  { href: '/webhook-endpoints', label: 'Webhook endpoints' },
  { href: '/changes', label: 'Changes' },
  { href: '/audit', label: 'Audit trail' },
  { href: '/settings/team', label: 'Team' },
  { href: '/settings/transfers', label: 'Transfers' },
  { href: '/settings/exports', label: 'Exports' },
  { href: '/settings/assistants', label: 'Assistants' },
];

/** Every page: skip link, one h1, navigation for signed-in people, messages announced to screen readers. */
export function page(p: PageInput): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${p.title} · Billing service</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/assets/dashboard.css">
<script src="/assets/copy.js" defer></script></head><body>
<a class="skip" href="#main">Skip to content</a>
<header><nav aria-label="Main"><ul>
<li><a href="${p.user ? '/overview' : '/'}">Billing service</a></li>
${
  p.user
    ? html`${NAV.filter((n) => mayOpen(p.user!.role, n.href)).map((n) => html`<li><a href="${n.href}">${n.label}</a></li>`)}
<li><form class="inline" method="post" action="/logout"><input type="hidden" name="_csrf" value="${p.csrf}"><button class="secondary flush" type="submit">Log out</button></form></li>`
    : html`<li><a href="/signup">Sign up</a></li><li><a href="/login">Log in</a></li>`
}
</ul></nav></header>
<main id="main">
<h1>${p.title}</h1>
${p.notice ? html`<p class="notice" role="status">${p.notice}</p>` : ''}
${p.error ? html`<p class="error" role="alert">${p.error}</p>` : ''}
${p.body}
</main></body></html>`.value;
}

export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${csrf}">`;
}
