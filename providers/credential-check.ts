import type { ProviderId } from '../domain/providers';
import { ProviderError } from './errors';
import { parseServiceAccount } from './store_android/auth';
import type { ProviderCredential } from './types';

/**
 * What can be judged of a pasted credential before it is stored, without calling anyone: a
 * refusal to show the person who pasted it, or null. Today: a Play service account whose
 * token_uri is not a token endpoint we may call (providers/store_android/token-endpoint.ts).
 */
export function credentialRefusal(
  provider: ProviderId,
  credential: ProviderCredential,
  providerBaseUrl: string,
): string | null {
  if (provider !== 'store_android' || credential.service_account_json === undefined) return null;
  try {
    parseServiceAccount(credential.service_account_json, providerBaseUrl);
    return null;
  } catch (e) {
    if (e instanceof ProviderError)
      return `The service-account JSON ${e.reason.replace(/^service_account_json /, '')}.`;
    throw e;
  }
}
