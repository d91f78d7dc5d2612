import crypto from 'node:crypto';
import type Koa from 'koa';
import Provider, { errors, type Configuration } from 'oidc-provider';
import { OAuthRecords } from '../../db/oauth-records';
import type { Services } from '../../operations/services';

/** The one scope an assistant's token carries: the tool server. What it may do there is the person's role. */
export const TOOLS_SCOPE = 'billing';

/** The paths the authorization server answers on the dashboard host. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  end_session: '/oauth/session/end',
} as const;

const CONSENT_PREFIX = '/assistants/consent/';

/** The consent page of one pending authorization (api/oauth/consent-page.ts). */
export const consentPath = (uid: string) => `${CONSENT_PREFIX}${encodeURIComponent(uid)}`;

/** The resource every token is bound to (RFC 8707): the tool server's own URL. */
export const toolsResource = (services: Services) => new URL(`${services.config.publicToolsUrl}/`).href;

/** `<tenant>.<person>`: the account a grant is for, so a token names both. */
export const accountIdOf = (tenantId: string, userId: string) => `${tenantId}.${userId}`;
export function parseAccountId(accountId: unknown): { tenantId: string; userId: string } | undefined {
  if (typeof accountId !== 'string') return undefined;
  const [tenantId, userId, extra] = accountId.split('.');
  return tenantId && userId && extra === undefined ? { tenantId, userId } : undefined;
}

const LOOPBACKS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** A loopback redirect URI, port aside (RFC 8252 §7.3, as the MCP authorization spec asks of every client). */
function sameLoopbackAnyPort(registered: string, presented: string): boolean {
  const a = URL.parse(registered);
  const b = URL.parse(presented);
  if (!a || !b || a.protocol !== 'http:' || b.protocol !== 'http:' || !LOOPBACKS.has(a.hostname)) return false;
  return a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search && !b.hash;
}

/**
 * Keys for the authorization server's signed cookies (the pending interaction): derived from the
 * master key, so every api process of a deployment agrees; a process without one (a test, the
 * demo) uses its own.
 */
function cookieKeys(services: Services): string[] {
  const base = services.config.masterKey ?? crypto.randomBytes(32).toString('base64url');
  return [crypto.createHmac('sha256', base).update('assistant sign-in cookies').digest('base64url')];
}

/**
 * The authorization server on the dashboard host (docs/assistant-sign-in.md): `oidc-provider`
 * configured as the MCP authorization spec asks — dynamic client registration, the
 * authorization code with PKCE S256 only, refresh tokens that rotate at each use, RFC 7009
 * revocation, RFC 8707 resource indicators with the tool server as the one resource, opaque
 * tokens stored hashed (db/oauth-records.ts). The person's consent is our page
 * (api/oauth/consent-page.ts); no OpenID identity is handed out.
 */
export function createAuthorizationServer(services: Services): Provider {
  const resource = toolsResource(services);
  const configuration: Configuration = {
    adapter: (name: string) => new OAuthRecords(services.db, name),
    clients: [],
    routes: OAUTH_ROUTES,
    responseTypes: ['code'],
    pkce: { required: () => true },
    scopes: [TOOLS_SCOPE],
    claims: { openid: ['sub'] },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    cookies: { keys: cookieKeys(services) },
    // It issues no ID tokens (no `openid` scope): the key exists because the library wants one.
    jwks: { keys: [crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' })] },
    features: {
      devInteractions: { enabled: false },
      // No registration access token: nothing here manages a registration after it is made
      // (RFC 7592 is off), and each would be a record that never expires.
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      revocation: { enabled: true },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (URL.parse(indicator)?.href !== resource) throw new errors.InvalidTarget();
          return { scope: TOOLS_SCOPE, audience: resource, accessTokenFormat: 'opaque', accessTokenTTL: 60 * 60 };
        },
      },
    },
    ttl: {
      AccessToken: 60 * 60,
      AuthorizationCode: 60,
      RefreshToken: 30 * 24 * 60 * 60,
      Grant: 30 * 24 * 60 * 60,
      Interaction: 10 * 60,
      Session: 60 * 60,
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    // Every authorization asks the person again: the only grant is the one this consent just gave.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    findAccount: async (_ctx, sub) =>
      parseAccountId(sub) ? { accountId: sub, claims: async () => ({ sub }) } : undefined,
    interactions: { url: (_ctx, interaction) => consentPath(interaction.uid) },
    renderError: async (ctx, out) => {
      // The OAuth error code and its fixed description only: nothing the request carried is echoed.
      ctx.type = 'html';
      const code = String(out.error ?? 'server_error').replace(/[^a-z_]/g, '');
      // An unknown client here is most often one the cleanup removed (docs/assistant-sign-in.md): an
      // assistant holding no token never asks the token endpoint, so only its person can tell it to forget it.
      const what =
        code === 'invalid_client'
          ? 'This assistant is no longer registered here: an assistant’s registration is removed when it goes unused for 30 days (a day, if it was never used). In the assistant, remove this connection and add it again: it registers anew and asks for your approval.'
          : `The assistant's request could not be completed (${code}). Start the connection again from the assistant.`;
      ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in refused</title></head><body><main><h1>Sign-in refused</h1><p>${what}</p></main></body></html>`;
    },
  };
  const provider = new Provider(services.config.publicDashboardUrl, configuration);
  // Redirect URIs match exactly, except that a loopback one may come back on any port.
  const allowed = provider.Client.prototype.redirectUriAllowed;
  provider.Client.prototype.redirectUriAllowed = function (this: InstanceType<typeof provider.Client>, value: string) {
    return allowed.call(this, value) || this.redirectUris!.some((r) => sameLoopbackAnyPort(r, value));
  };
  return provider;
}

/**
 * Serves the authorization server's endpoints, and its metadata under both names
 * (`/.well-known/oauth-authorization-server`, RFC 8414, and the OpenID one it answers itself).
 * Registration is limited per client address (`registrationLimit`).
 */
export function authorizationServerRoutes(
  provider: Provider,
  registrationLimit: (ctx: Koa.Context) => Promise<boolean>,
): Koa.Middleware {
  const handle = provider.callback();
  const paths = new Set<string>([...Object.values(OAUTH_ROUTES), '/.well-known/openid-configuration']);
  return async (ctx, next) => {
    let path = ctx.path;
    if (path === '/.well-known/oauth-authorization-server') path = '/.well-known/openid-configuration';
    const own = paths.has(path) || path.startsWith(`${OAUTH_ROUTES.authorization}/`);
    if (!own) return next();
    if (path === OAUTH_ROUTES.registration && ctx.method === 'POST' && !(await registrationLimit(ctx))) {
      ctx.status = 429;
      ctx.set('Retry-After', '3600');
      ctx.body = {
        error: 'rate_limited',
        error_description: 'Too many client registrations from this network; try again later.',
      };
      return;
    }
    if (path !== ctx.path) ctx.req.url = path + (ctx.querystring ? `?${ctx.querystring}` : '');
    ctx.respond = false;
    await handle(ctx.req, ctx.res);
  };
}
