import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config';
import { createAdapters } from '../../providers';
import { generateMasterKey } from '../../vault/vault';

const PUSH = 'rtdn-push@example-project.iam.gserviceaccount.com';

describe('production configuration (issue #18, item 8)', () => {
  it('refuses to start without STORE_ANDROID_PUSH_SERVICE_ACCOUNT, naming the variable', () => {
    const attempt = () => loadConfig({ NODE_ENV: 'production', MASTER_KEY: generateMasterKey() });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/STORE_ANDROID_PUSH_SERVICE_ACCOUNT/);
    try {
      attempt();
    } catch (e) {
      expect((e as ConfigError).variable).toBe('STORE_ANDROID_PUSH_SERVICE_ACCOUNT');
    }
  });

  it('names every missing variable at once', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/MASTER_KEY.*STORE_ANDROID_PUSH_SERVICE_ACCOUNT/);
  });

  it('starts with it, and the Play adapter is built requiring it', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      MASTER_KEY: generateMasterKey(),
      STORE_ANDROID_PUSH_SERVICE_ACCOUNT: PUSH,
    });
    expect(config.storeAndroidPushServiceAccount).toBe(PUSH);
    // The adapter reads the config's value, never the process env.
    expect(() => createAdapters(config)).not.toThrow();
  });

  it('development and tests run against the emulators without it', () => {
    expect(loadConfig({}).storeAndroidPushServiceAccount).toBeUndefined();
    expect(loadConfig({ NODE_ENV: 'test' }).storeAndroidPushServiceAccount).toBeUndefined();
  });
});
