import { describe, expect, it } from 'vitest';
import { startApiProcess } from '../helpers/api-process';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';

/**
 * The api process tells the operator, once at start, when PostgreSQL runs without autovacuum: the
 * planner's statistics would never be refreshed (docs/operations.md, "Postgres"). Asserted against
 * what the run's server says, both ways: CI's server runs without it, a developer's usually with.
 */
describe("the api process and the server's settings", () => {
  it('warns at start exactly when the server runs without autovacuum', async () => {
    const off = (await testDb().raw('show autovacuum')).rows[0].autovacuum === 'off';
    const api = await startApiProcess({ LOG_LEVEL: 'info' });
    try {
      const lines = await until(
        'the start-up lines up to the dispatcher',
        async () =>
          api
            .stdout()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { level: number; msg: string }),
        // The dispatcher starts after the check: its line means the check has had its say.
        (ls) => ls.some((l) => l.msg === 'webhook outbox dispatcher started'),
      );
      const warned = lines.filter((l) => l.msg.includes('without autovacuum'));
      expect(warned.length).toBe(off ? 1 : 0);
      if (off) expect(warned[0].level).toBe(40);
    } finally {
      await api.stop();
    }
  });
});
