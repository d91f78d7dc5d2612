import { defineConfig } from 'vitest/config';
import { DurationsReporter } from './test/durations-reporter';
import { LongestFirstSequencer } from './test/sequencer';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // 2 cores: more workers than that only adds contention with Postgres and Temporal.
    maxWorkers: 2,
    // One module cache per worker, shared by the files it runs: the app, the Temporal SDK and the
    // provider clients are imported once per worker instead of once per file (docs/testing.md,
    // "Keeping the suite fast" says what a file must then clean up).
    isolate: false,
    // Longest files first (test/durations.json), so the run does not end on one long file.
    sequence: { sequencer: LongestFirstSequencer },
    reporters: process.env.RECORD_TEST_DURATIONS === '1' ? ['default', new DurationsReporter()] : ['default'],
    env: { NODE_ENV: 'test', LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
  },
});
