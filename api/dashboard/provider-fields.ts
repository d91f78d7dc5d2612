import type { ProviderId } from '../../domain/providers';

/**
 * What a person types to connect each provider: the credential object's fields as the adapters
 * read them (providers/<id>/), and what the webhook "secret" means for that provider.
 */
export interface CredentialField {
  name: string;
  label: string;
  multiline?: boolean;
}

export const CREDENTIAL_FIELDS: Record<ProviderId, CredentialField[]> = {
  psp_a: [{ name: 'secret_key', label: 'Secret key' }],
  psp_b: [{ name: 'api_key', label: 'API key' }],
  psp_c: [
    { name: 'key_id', label: 'Key ID' },
    { name: 'key_secret', label: 'Key secret' },
  ],
  store_android: [{ name: 'service_account_json', label: 'Service-account JSON', multiline: true }],
  store_ios: [
    { name: 'issuer_id', label: 'Issuer ID' },
    { name: 'key_id', label: 'Key ID' },
    { name: 'private_key', label: 'Private key (.p8)', multiline: true },
    { name: 'bundle_id', label: 'Bundle ID' },
  ],
};

/** Label of the webhook secret field, or null where notifications are verified without one (Apple's signed JWS). */
export const WEBHOOK_SECRET_LABEL: Record<ProviderId, string | null> = {
  psp_a: 'Webhook signing secret',
  psp_b: 'Webhook signing secret',
  psp_c: 'Webhook signing secret',
  store_android: 'Push subscription audience',
  store_ios: null,
};
