import type Koa from 'koa';

/**
 * Every response of the dashboard host. The pages load their one stylesheet and one script
 * from this origin and nothing else, so the policy can forbid inline script and style, any
 * other origin, and (frame-ancestors, with X-Frame-Options for older browsers) framing: a
 * page that cannot be framed cannot be click-jacked into "Create key" or "Revoke".
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The policy for a page whose form, once answered, sends the browser on to another site: the
 * assistant consent page, whose answer is a redirect to the assistant's registered address
 * (docs/assistant-sign-in.md). Browsers hold the redirects that follow a form's submission to
 * `form-action` too, so that one address (an origin, or the scheme of an app's own URI) is added
 * and nothing else. Undefined when the address cannot be named safely.
 */
export function policyWithFormTarget(target: string): string | undefined {
  const url = URL.parse(target);
  if (!url || ['javascript:', 'data:', 'blob:', 'file:'].includes(url.protocol)) return undefined;
  const source = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  if (!/^[a-z][a-z0-9+.-]*:(\/\/[a-z0-9.\-[\]:]+)?$/i.test(source)) return undefined;
  return CONTENT_SECURITY_POLICY.replace("form-action 'self'", `form-action 'self' ${source}`);
}

export function securityHeaders(): Koa.Middleware {
  return async (ctx, next) => {
    // Set before next() so error pages and early answers carry them too.
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('X-Content-Type-Options', 'nosniff');
    // Paths like /providers/<id> stay on this host; other sites learn only the origin.
    ctx.set('Referrer-Policy', 'strict-origin-when-cross-origin');
    await next();
  };
}
