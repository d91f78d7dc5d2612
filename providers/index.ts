import fs from 'node:fs';
import type { ProviderId } from '../domain/providers';
import { createPspAAdapter } from './psp_a/adapter';
import { createPspBAdapter } from './psp_b/adapter';
import { createPspCAdapter } from './psp_c/adapter';
import { createStoreAndroidAdapter } from './store_android/adapter';
import { createStoreIosAdapter } from './store_ios/adapter';
import { fetchEmulatorRootCa } from './store_ios/signed-data';
import type { ProviderAdapter } from './types';

export type Adapters = Record<ProviderId, ProviderAdapter>;

/**
 * What the adapters need from the configuration (runtime/config.ts's Config has these fields; providers/ does not
 * import it).
 */
export interface AdapterSettings {
  providerBaseUrls: Record<ProviderId, string>;
  storeAndroidPushServiceAccount?: string;
  storeAndroidJwksUrl?: string;
  storeIosTrustedRoots?: string[];
}

const isLocal = (url: string) => /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\]|emulators)(:|\/|$)/.test(url);

/**
 * The five adapters, configured for where `config` points them. Against the local emulators
 * the stores' trust anchors are the emulators' own (their OIDC key set and test root CA);
 * against the real stores they are Google's and Apple's defaults unless overridden.
 */
export function createAdapters(config: AdapterSettings): Adapters {
  const android = config.providerBaseUrls.store_android;
  const ios = config.providerBaseUrls.store_ios;
  let iosRoots: Promise<Buffer[]> | undefined;
  return {
    psp_a: createPspAAdapter(),
    psp_b: createPspBAdapter(),
    psp_c: createPspCAdapter(),
    store_android: createStoreAndroidAdapter({
      jwksUrl: config.storeAndroidJwksUrl ?? (isLocal(android) ? `${android}/oauth2/v3/certs` : undefined),
      // Required in production (runtime/config.ts refuses to start without it).
      pushServiceAccountEmail: config.storeAndroidPushServiceAccount,
    }),
    store_ios: createStoreIosAdapter(
      config.storeIosTrustedRoots
        ? { trustedRoots: config.storeIosTrustedRoots.map((f) => fs.readFileSync(f)) }
        : isLocal(ios)
          ? // Fetched once, lazily: the emulator may start after us.
            {
              trustedRoots: () =>
                (iosRoots ??= fetchEmulatorRootCa(ios)
                  .then((r) => [r])
                  .catch((e) => {
                    iosRoots = undefined;
                    throw e;
                  })),
            }
          : {},
    ),
  };
}
