import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config';
import { PRIORITY } from '../../runtime/process-priority';

describe('ENGINE_NICE: the engine yields the CPU to the api (docs/operations.md, "CPU priorities")', () => {
  it('yields by default outside tests, not under them, and takes 0–19', () => {
    expect(loadConfig({}).engineNice).toBe(PRIORITY.engine);
    expect(loadConfig({ NODE_ENV: 'test' }).engineNice).toBe(0);
    expect(loadConfig({ ENGINE_NICE: '0' }).engineNice).toBe(0);
    expect(loadConfig({ ENGINE_NICE: '19' }).engineNice).toBe(19);
    // Outbound deliveries yield to the engine too.
    expect(PRIORITY.outbound).toBeGreaterThan(PRIORITY.engine);
  });

  it('refuses anything else, naming the variable', () => {
    for (const bad of ['-1', '20', '2.5', 'low']) {
      const attempt = () => loadConfig({ ENGINE_NICE: bad });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(/ENGINE_NICE must be a whole number from 0 to 19/);
    }
  });
});
