import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config';
import { generateMasterKey } from '../../vault/vault';

const PRODUCTION = {
  NODE_ENV: 'production',
  MASTER_KEY: generateMasterKey(),
  STORE_ANDROID_PUSH_SERVICE_ACCOUNT: 'rtdn-push@example-project.iam.gserviceaccount.com',
};
const allowed = (env: NodeJS.ProcessEnv, localStart = false) =>
  loadConfig(env, { localStart }).outboundWebhooks.allowPrivateAddresses;

/** OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: 1 allows, 0 refuses, unset allows only under `npm start` outside production. */
describe('outbound webhooks to private addresses', () => {
  it('unset: allowed under npm start, refused elsewhere and in production', () => {
    expect(allowed({}, true)).toBe(true);
    expect(allowed({})).toBe(false);
    expect(allowed({ NODE_ENV: 'test' })).toBe(false);
    expect(allowed(PRODUCTION, true)).toBe(false);
    expect(allowed({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: '' }, true)).toBe(true);
  });

  it('1 allows and 0 refuses, whoever starts the service', () => {
    for (const localStart of [true, false]) {
      expect(allowed({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: '1' }, localStart)).toBe(true);
      expect(allowed({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: '0' }, localStart)).toBe(false);
      expect(allowed({ ...PRODUCTION, OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: '1' }, localStart)).toBe(true);
    }
  });

  it('anything else is refused at start, naming the variable', () => {
    const attempt = () => loadConfig({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: 'yes' }, { localStart: true });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES must be 1 \(allow\) or 0 \(refuse\), got "yes"/);
  });
});
