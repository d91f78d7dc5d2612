import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config';

const atStart = (env: NodeJS.ProcessEnv) => loadConfig(env).tenantSchedulesAtStart;

/** TENANT_SCHEDULES_AT_START: the api process ensures every tenant's schedules as it starts unless told 0. */
describe('tenant schedules at api start', () => {
  it('on unless set to 0, under every NODE_ENV', () => {
    for (const NODE_ENV of [undefined, 'development', 'test']) {
      expect(atStart({ NODE_ENV })).toBe(true);
      expect(atStart({ NODE_ENV, TENANT_SCHEDULES_AT_START: '' })).toBe(true);
      expect(atStart({ NODE_ENV, TENANT_SCHEDULES_AT_START: '1' })).toBe(true);
      expect(atStart({ NODE_ENV, TENANT_SCHEDULES_AT_START: '0' })).toBe(false);
    }
  });

  it('anything else is refused at start, naming the variable', () => {
    for (const raw of ['yes', 'false', '2']) {
      const attempt = () => loadConfig({ TENANT_SCHEDULES_AT_START: raw });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(`TENANT_SCHEDULES_AT_START must be 1 or 0, got "${raw}"`);
    }
  });
});
