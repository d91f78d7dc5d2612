import crypto from 'node:crypto';
import type Koa from 'koa';
import type { EmulatorFactory } from '../common/types';
import { decodeProtectedHeader } from 'jose';
import { accountView, accounts, ensureAccount, keyOwner } from './accounts';
import { appReceipt } from './app-receipt';
import { AuthError, authenticate } from './auth';
import { connectRoutes, handleConnect } from './connect-api';
import { familyShare, sandboxPurchase, sendEvent, type IosEventParams } from './events';
import { ConnectError, sendConnectError, sendServerApiError, ServerApiError } from './http';
import { loadPki, rootCaView } from './pki';
import { handleServerApi } from './server-api';

/**
 * store_ios: the App Store's two server APIs on one port — App Store Connect
 * (`/v1/…`, JSON:API catalogue) and the App Store Server API (`/inApps/v1/…`) — both behind
 * Apple's ES256 bearer tokens, plus App Store Server Notifications V2 signed with a test
 * certificate chain whose root is served at GET /__control/root-ca.
 */
export const createEmulator: EmulatorFactory = (store) => {
  const pki = loadPki(store);
  const routes = connectRoutes(store);

  const api: Koa.Middleware = async (ctx) => {
    const server = ctx.path.startsWith('/inApps/');
    try {
      let caller;
      try {
        caller = await authenticate(store, ctx.get('authorization') || undefined, server ? 'server' : 'connect');
      } catch (err) {
        if (!(err instanceof AuthError)) throw err;
        ctx.status = 401;
        if (server) {
          ctx.type = 'text/plain';
          ctx.body = `Unauthenticated\n\nRequest ID: ${crypto.randomBytes(13).toString('base64url').toUpperCase()}.0.0\n`;
        } else {
          sendConnectError(
            ctx,
            new ConnectError(
              401,
              'NOT_AUTHORIZED',
              'Authentication credentials are missing or invalid.',
              'Provide a properly configured and signed bearer token, and make sure that it has not expired. Learn more about Generating Tokens for API Requests https://developer.apple.com/go/?id=api-generating-tokens',
            ),
          );
        }
        return;
      }
      if (server) {
        if (!(await handleServerApi(store, () => pki.trusted, ctx, caller))) {
          ctx.status = 404;
          ctx.type = 'text/plain';
          ctx.body = 'Not Found';
        }
        return;
      }
      await handleConnect(routes, ctx, caller);
    } catch (err) {
      if (err instanceof ConnectError) return sendConnectError(ctx, err);
      if (err instanceof ServerApiError) return sendServerApiError(ctx, err);
      ctx.app.emit('error', err, ctx);
      if (server) sendServerApiError(ctx, new ServerApiError(500, 5000000, 'An unknown error occurred.'));
      else
        sendConnectError(
          ctx,
          new ConnectError(
            500,
            'UNEXPECTED_ERROR',
            'An unexpected error occurred.',
            'An unexpected error occurred on the server side.',
          ),
        );
    }
  };

  return {
    provider: 'store_ios',
    api,
    sendEvent: (params) => sendEvent(store, pki, params as IosEventParams),
    sandboxPurchase: (params) => sandboxPurchase(store, pki, params as Record<string, unknown>),
    keyMode: (ctx) => {
      const token = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
      try {
        const kid = token ? decodeProtectedHeader(token).kid : undefined;
        return (kid && keyOwner(store, kid)?.mode) || null;
      } catch {
        return null;
      }
    },
    control: {
      'POST /accounts': (body) =>
        accountView(ensureAccount(store, typeof body.account === 'string' && body.account ? body.account : undefined)),
      'GET /accounts': () => ({ accounts: accounts(store).map(accountView) }),
      'GET /root-ca': () => rootCaView(pki.trusted),
      'POST /family-share': (body) => familyShare(store, pki, body),
      'POST /app-receipt': (body) => appReceipt(store, pki.trusted, body),
    },
  };
};
