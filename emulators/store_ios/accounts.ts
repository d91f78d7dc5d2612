import crypto from 'node:crypto';
import type { EmulatorStore } from '../common/types';

export type Mode = 'test' | 'live';

/** Shape of providers/types.ts ProviderCredential for store_ios. */
export interface IosCredential {
  issuer_id: string;
  key_id: string;
  private_key: string; // PKCS#8 PEM, P-256, as App Store Connect's .p8 download
  bundle_id: string;
}

/**
 * One connected account = one App Store Connect team with one app (the bundle id is the
 * account id), holding a distinct API key per mode: the test key reaches Sandbox
 * transactions and test-mode catalogue objects, the live key Production and live ones.
 */
export interface IosAccount extends Record<string, unknown> {
  account: string;
  bundle_id: string;
  app_id: string; // App Store Connect app id == the app's Apple ID (appAppleId)
  name: string;
  credentials: Record<Mode, IosCredential>;
  created: number;
}

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function keyId(): string {
  return Array.from(crypto.randomBytes(10), (b) => KEY_ALPHABET[b % KEY_ALPHABET.length]).join('');
}

function credential(bundleId: string): IosCredential {
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    issuer_id: crypto.randomUUID(),
    key_id: keyId(),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    bundle_id: bundleId,
  };
}

export function accounts(store: EmulatorStore): IosAccount[] {
  return store.list('accounts') as IosAccount[];
}

export function findAccount(store: EmulatorStore, id: string): IosAccount | undefined {
  return accounts(store).find((a) => a.account === id);
}

export function ensureAccount(store: EmulatorStore, id?: string): IosAccount {
  if (id) {
    const existing = findAccount(store, id);
    if (existing) return existing;
  }
  const bundleId = id ?? `com.emulator.app${crypto.randomBytes(3).toString('hex')}`;
  const appId = String(1_000_000_000 + crypto.randomInt(0, 5_000_000_000));
  return store.insert('accounts', {
    account: bundleId,
    bundle_id: bundleId,
    app_id: appId,
    name: `App ${bundleId}`,
    credentials: { test: credential(bundleId), live: credential(bundleId) },
    created: Date.now(),
  } satisfies IosAccount);
}

/** The shared emulator account contract; Apple signs notifications with its chain, so no webhook secret. */
export function accountView(a: IosAccount): Record<string, unknown> {
  return { account: a.account, credentials: a.credentials, webhook_secret: '' };
}

/** The account named, or the first one created (the demo tenant's). */
export function pickAccount(store: EmulatorStore, id?: unknown): IosAccount {
  if (typeof id === 'string' && id) {
    const a = findAccount(store, id);
    if (!a) throw Object.assign(new Error(`no account ${id}; POST /__control/accounts first`), { status: 404 });
    return a;
  }
  const first = accounts(store)[0];
  if (!first) throw Object.assign(new Error('no account yet; POST /__control/accounts first'), { status: 409 });
  return first;
}

export function keyOwner(
  store: EmulatorStore,
  kid: string,
): { account: IosAccount; mode: Mode; cred: IosCredential } | undefined {
  for (const account of accounts(store)) {
    for (const mode of ['test', 'live'] as const) {
      if (account.credentials[mode].key_id === kid) return { account, mode, cred: account.credentials[mode] };
    }
  }
  return undefined;
}
