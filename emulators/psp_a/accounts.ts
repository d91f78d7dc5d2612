import { StripeApiError } from './errors';
import { newId, nowSeconds, randomBase62 } from './ids';
import type { Repo, Scope, StripeObject } from './repo';

type ModeName = 'test' | 'live';

export interface AccountRecord extends StripeObject {
  _credentials: Record<ModeName, { secret_key: string }>;
  _publishable: Record<ModeName, string>;
  _webhook_secret: string;
  /** Connect client id when this account acts as a platform for the OAuth flow. */
  _client_id: string;
  /** The platform that connected this account through OAuth (may act on it with Stripe-Account). */
  _platform?: string;
  _refresh_tokens?: Partial<Record<ModeName, string>>;
  /** Registered only as an OAuth client (a platform), not a merchant: never the default account. */
  _oauth_client?: boolean;
  /** false while a platform registered by its client id alone awaits its secret key (first token exchange). */
  _pinned?: boolean;
}

/** The control answer shared by all five emulators (common.md), plus this account's Connect client id. */
export function describeAccount(a: AccountRecord) {
  return {
    account: a.id,
    credentials: { test: { ...a._credentials.test }, live: { ...a._credentials.live } },
    webhook_secret: a._webhook_secret,
    client_id: a._client_id,
  };
}

/**
 * Connected accounts: each has distinct test and live secret keys, a webhook signing secret,
 * and may be reached by its own key or by its platform's key with a Stripe-Account header.
 */
export class Accounts {
  private byKey?: Map<string, { account: string; livemode: boolean }>;

  constructor(private readonly repo: Repo) {}

  private keys(): Map<string, { account: string; livemode: boolean }> {
    if (!this.byKey) {
      this.byKey = new Map();
      for (const a of this.list()) this.indexKeys(a);
    }
    return this.byKey;
  }

  private indexKeys(a: AccountRecord): void {
    this.byKey?.set(a._credentials.test.secret_key, { account: a.id, livemode: false });
    this.byKey?.set(a._credentials.live.secret_key, { account: a.id, livemode: true });
  }

  list(): AccountRecord[] {
    return this.repo.all('accounts') as AccountRecord[];
  }

  get(id: string): AccountRecord | undefined {
    return this.repo.get('accounts', id) as AccountRecord | undefined;
  }

  /** The default account of /__control/events and /__control/checkout: the first one created. */
  first(): AccountRecord | undefined {
    return this.list().find((a) => !a._oauth_client);
  }

  byClientId(clientId: string): AccountRecord | undefined {
    return this.list().find((a) => a._client_id === clientId);
  }

  lookupKey(key: string): { account: string; livemode: boolean } | undefined {
    return this.keys().get(key);
  }

  ensure(id?: string, extra: { platform?: string; email?: string; business_name?: string } = {}): AccountRecord {
    if (id) {
      const existing = this.get(id);
      if (existing) return existing;
    }
    const accountId = id || newId('acct', 16);
    const suffix = randomBase62(32);
    const record: AccountRecord = {
      id: accountId,
      object: 'account',
      business_profile: { mcc: null, name: extra.business_name ?? null, support_email: null, url: null },
      business_type: null,
      capabilities: { card_payments: 'active', transfers: 'active' },
      charges_enabled: true,
      controller: { type: extra.platform ? 'application' : 'account' },
      country: 'US',
      created: nowSeconds(),
      default_currency: 'usd',
      details_submitted: true,
      email: extra.email ?? null,
      metadata: {},
      payouts_enabled: true,
      settings: { dashboard: { display_name: extra.business_name ?? accountId, timezone: 'Etc/UTC' } },
      type: 'standard',
      _credentials: {
        test: { secret_key: `sk_test_${suffix}${randomBase62(16)}` },
        live: { secret_key: `sk_live_${suffix}${randomBase62(16)}` },
      },
      _publishable: { test: `pk_test_${randomBase62(48)}`, live: `pk_live_${randomBase62(48)}` },
      _webhook_secret: `whsec_${randomBase62(32)}`,
      _client_id: `ca_${randomBase62(32)}`,
      ...(extra.platform ? { _platform: extra.platform } : {}),
    };
    this.repo.insert('accounts', record);
    this.indexKeys(record);
    return record;
  }

  /**
   * A Connect platform for the OAuth flow: its `ca_…` client id and, optionally, the secret
   * key the dashboard is configured with (so a fresh emulator accepts a configured pair).
   * A platform known only by client id takes the first secret key its token exchange uses.
   */
  ensurePlatform(clientId?: string, secretKey?: string): AccountRecord {
    if (clientId !== undefined && !/^ca_[A-Za-z0-9]+$/.test(clientId))
      throw new StripeApiError(
        400,
        'invalid_request_error',
        'client_id must look like ca_…',
        'parameter_invalid_string',
        'client_id',
      );
    let platform = clientId ? this.byClientId(clientId) : undefined;
    if (!platform) {
      platform = this.ensure(undefined, { business_name: 'Connect platform' });
      platform._oauth_client = true;
      if (clientId) platform._client_id = clientId;
      platform._pinned = false;
    }
    if (secretKey !== undefined && !this.ownsKey(platform, secretKey)) this.pin(platform, secretKey);
    this.repo.touch();
    return platform;
  }

  /** Give a platform awaiting its key the dashboard's configured secret key. */
  pin(platform: AccountRecord, secretKey: string): void {
    const mode = /^sk_(test|live)_[A-Za-z0-9]{8,}$/.exec(secretKey)?.[1] as ModeName | undefined;
    if (!mode)
      throw new StripeApiError(
        400,
        'invalid_request_error',
        'client_secret must be a secret key (sk_test_… or sk_live_…)',
        'parameter_invalid_string',
        'client_secret',
      );
    if (platform._pinned !== false || this.lookupKey(secretKey)) {
      throw new StripeApiError(
        400,
        'invalid_request_error',
        `client_secret does not belong to the platform ${platform._client_id}`,
        'parameter_invalid_string',
        'client_secret',
      );
    }
    this.byKey?.delete(platform._credentials[mode].secret_key);
    platform._credentials[mode].secret_key = secretKey;
    platform._pinned = true;
    this.indexKeys(platform);
    this.repo.touch();
  }

  ownsKey(a: AccountRecord, key: string): boolean {
    return a._credentials.test.secret_key === key || a._credentials.live.secret_key === key;
  }

  /**
   * Stripe's authentication: `Authorization: Bearer sk_…` (or HTTP Basic with the key as
   * user name), then the Stripe-Account header picks the connected account to act on.
   */
  authenticate(authorization: string | undefined, stripeAccount: string | undefined): Scope {
    const key = parseKey(authorization);
    if (!key) {
      throw new StripeApiError(
        401,
        'invalid_request_error',
        "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
      );
    }
    if (key.startsWith('pk_')) {
      throw new StripeApiError(
        401,
        'invalid_request_error',
        'This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys.',
        'secret_key_required',
      );
    }
    const found = this.lookupKey(key);
    if (!found) {
      throw new StripeApiError(
        401,
        'invalid_request_error',
        `Invalid API Key provided: ${maskKey(key)}`,
        'api_key_invalid',
      );
    }
    if (!stripeAccount || stripeAccount === found.account) return found;
    const target = this.get(stripeAccount);
    if (!target || target._platform !== found.account) {
      throw new StripeApiError(
        403,
        'invalid_request_error',
        `The provided key '${maskKey(key)}' does not have access to account '${stripeAccount}' (or that account does not exist). Application access may have been revoked.`,
        'account_invalid',
      );
    }
    return { account: target.id, livemode: found.livemode };
  }
}

function parseKey(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const [scheme, value] = authorization.split(' ', 2);
  if (!value) return undefined;
  if (scheme.toLowerCase() === 'bearer') return value.trim();
  if (scheme.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    return decoded.split(':')[0] || undefined;
  }
  return undefined;
}

/** Stripe never echoes a key: `sk_test_****…abcd`. */
export function maskKey(key: string): string {
  const m = /^([a-z]{2}_(?:test|live)_)/.exec(key);
  const prefix = m ? m[1] : '';
  return `${prefix}${'*'.repeat(Math.max(0, key.length - prefix.length - 4))}${key.slice(-4)}`;
}
