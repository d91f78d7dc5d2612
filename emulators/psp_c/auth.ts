import type Koa from 'koa';
import type { EmulatorStore } from '../common/types';
import { authFailed } from './errors';
import { nowSec } from './ids';
import { safeEqual, type AccountRecord, type Caller, type Mode } from './state';

/**
 * Razorpay authenticates API calls with HTTP Basic `key_id:key_secret` (the key id's
 * rzp_test_/rzp_live_ prefix fixes the mode), or, for partner apps, with the OAuth
 * access token as a Bearer token.
 */
export function authenticate(store: EmulatorStore, ctx: Koa.Context): Caller {
  const header = ctx.get('authorization');
  const basic = /^Basic\s+(.+)$/i.exec(header);
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    if (i < 0) throw authFailed();
    const keyId = decoded.slice(0, i);
    const secret = decoded.slice(i + 1);
    for (const a of store.list('accounts') as AccountRecord[]) {
      for (const mode of ['test', 'live'] as Mode[]) {
        const cred = a.credentials[mode];
        if (cred.key_id === keyId && safeEqual(cred.key_secret, secret)) return { account: a.account, mode };
      }
    }
    throw authFailed();
  }
  const bearer = /^Bearer\s+(.+)$/i.exec(header);
  if (bearer) {
    const token = store.find(
      'oauth_tokens',
      (t) => typeof t.access_token === 'string' && safeEqual(t.access_token, bearer[1]),
    );
    if (token && !token.revoked && Number(token.expires_at) > nowSec()) {
      return { account: String(token.account), mode: token.mode as Mode };
    }
  }
  throw authFailed();
}
