import { defineConfig } from 'vitest/config';

/**
 * `npm run test:unit`: the pure tests — domain rules, signatures, idempotency keys, pacing, SDK
 * routing, the import rules — with no Postgres, Temporal or emulator started (no global setup).
 * A test lands here by living in test/domain/ or by being named `*.unit.test.ts`. `npm test`
 * still runs everything (vitest.config.ts includes these too).
 */
export default defineConfig({
  test: {
    include: ['test/domain/**/*.test.ts', 'test/**/*.unit.test.ts'],
    pool: 'threads',
    env: { NODE_ENV: 'test', LOG_LEVEL: 'silent' },
  },
});
