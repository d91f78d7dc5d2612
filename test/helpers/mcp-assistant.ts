import { expect } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { listen } from './api';

/**
 * What an assistant keeps when it signs in (docs/assistant-sign-in.md): the official MCP client's
 * storage interface (`OAuthClientProvider`), in memory. The client itself does the flow —
 * discovery, registration, PKCE, the token exchange, refresh; this only stores what it hands over
 * and notes the authorization URL it would open in the person's browser.
 */
export class Assistant implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  constructor(
    readonly name: string,
    /** A loopback redirect, as desktop assistants register (any port: RFC 8252). */
    readonly redirect = `http://127.0.0.1:${40000 + Math.floor(Math.random() * 20000)}/callback`,
  ) {}
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(c: OAuthClientInformationMixed) {
    this.client = c;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  /** What the client drops when the server refuses it (a revoked refresh token: the tokens; a deleted registration: all). */
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = '';
  }
}

/**
 * The official client up to the authorization URL it would open in the person's browser:
 * discovery from the tool server's 401, dynamic registration, PKCE. Answers that URL.
 */
export async function startSignIn(a: Assistant, toolsRoot: string): Promise<URL> {
  const client = new Client({ name: a.name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${toolsRoot}/`), { authProvider: a });
  await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  await transport.close();
  expect(a.authorizationUrl).toBeDefined();
  return a.authorizationUrl!;
}

/** The official client connected with the tokens its provider holds (it refreshes them itself when told to). */
export async function connectedClient(a: Assistant, toolsRoot: string): Promise<Client> {
  const client = new Client({ name: a.name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${toolsRoot}/`), { authProvider: a }));
  return client;
}

/** The code that came back to the redirect URI, exchanged by the client itself (`finishAuth`); answers it connected. */
export async function finishSignIn(a: Assistant, toolsRoot: string, code: string): Promise<Client> {
  await new StreamableHTTPClientTransport(new URL(`${toolsRoot}/`), { authProvider: a }).finishAuth(code);
  return connectedClient(a, toolsRoot);
}

/** `tools/list` with a bare bearer token, to read the tool server's status and headers for it. */
export const toolsList = (toolsRoot: string, token: string) =>
  fetch(`${toolsRoot}/`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

/** A tool result's text. */
export const toolText = (r: Awaited<ReturnType<Client['callTool']>>) =>
  (r.content as { text?: string }[]).map((c) => c.text ?? '').join('');

/**
 * The assistant's loopback redirect target, as a desktop assistant listens for it: answers the
 * browser with a page and keeps each `/callback` that arrived (not the browser's favicon request).
 */
export async function loopbackRedirect(): Promise<{ redirect: string; arrivals: URL[]; close: () => Promise<void> }> {
  const arrivals: URL[] = [];
  const l = await listen((req, res) => {
    const url = new URL(req.url!, 'http://127.0.0.1');
    if (url.pathname === '/callback') arrivals.push(url);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end('<!doctype html><title>Assistant</title><p>You may close this window.</p>');
  });
  return { redirect: `${l.url}/callback`, arrivals, close: l.close };
}
