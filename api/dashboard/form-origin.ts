import type Koa from 'koa';

/**
 * Whether a form post was sent by a browser from another site, judged from its headers alone, so
 * that it is refused before its body is read. Every browser names where a post comes from:
 * `Sec-Fetch-Site` (same-origin for the dashboard's own forms), or, before it had that, `Origin`
 * (the page's scheme, host and port, or `null` from a sandboxed or privacy-sensitive context).
 * The host is compared with the request's own and with PUBLIC_DASHBOARD_URL's, so a proxy that
 * rewrites `Host` still lets the dashboard's own forms through. A request with neither header is no
 * browser's cross-site post: its form's token (form.ts, multipart.ts) is what answers it.
 */
export function fromAnotherSite(ctx: Koa.Context, publicDashboardUrl: string): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site) return site !== 'same-origin' && site !== 'none';
  const origin = ctx.get('origin');
  if (!origin) return false;
  const host = hostOf(origin);
  return host === null || (host !== ctx.host && host !== hostOf(publicDashboardUrl));
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host || null;
  } catch {
    return null;
  }
}
