import type Koa from 'koa';
import { STYLE } from './layout';
import { HOME_STYLE } from '../dashboard-home';

/**
 * "Copy" buttons: `data-copy="<input id>"`. A file, not an inline handler, so the CSP can say
 * script-src 'self' and an injected inline script or handler never runs.
 */
const COPY_JS = `document.addEventListener('click', function (e) {
  var b = e.target.closest && e.target.closest('button[data-copy]');
  if (!b) return;
  var field = document.getElementById(b.getAttribute('data-copy'));
  if (!field) return;
  navigator.clipboard.writeText(field.value).then(function () { b.textContent = 'Copied'; });
});
`;

const ASSETS: Record<string, [type: string, body: string]> = {
  '/assets/dashboard.css': ['text/css; charset=utf-8', STYLE],
  '/assets/home.css': ['text/css; charset=utf-8', HOME_STYLE],
  '/assets/copy.js': ['text/javascript; charset=utf-8', COPY_JS],
};

/** The dashboard's only static files, from memory. */
export function dashboardAssets(): Koa.Middleware {
  return async (ctx, next) => {
    const a = ctx.method === 'GET' || ctx.method === 'HEAD' ? ASSETS[ctx.path] : undefined;
    if (!a) return next();
    ctx.type = a[0];
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = a[1];
  };
}
