import { defineConfig } from 'vitest/config';
import { DurationsReporter } from './test/durations-reporter';
import { LongestFirstSequencer } from './test/sequencer';
import { tierProjects } from './test/tier-projects';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // 2 cores: more workers than that only adds contention with Postgres and Temporal.
    maxWorkers: 2,
    // One module cache per worker, shared by the files it runs: the app, the Temporal SDK and the
    // provider clients are imported once per worker instead of once per file (docs/testing.md,
    // "Keeping the suite fast" says what a file must then clean up).
    isolate: false,
    // Tier by tier (a worker is shared only within one), longest files first within each (test/durations.json).
    sequence: { sequencer: LongestFirstSequencer },
    reporters: process.env.RECORD_TEST_DURATIONS === '1' ? ['default', new DurationsReporter()] : ['default'],
    env: { NODE_ENV: 'test', LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
    // The three tiers by need (test/tiers.ts): `npm test` runs them all, `npm run test:unit|test:db|test:engine` one.
    projects: tierProjects(),
  },
});
