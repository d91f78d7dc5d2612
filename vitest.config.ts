import { defineConfig } from 'vitest/config';
import { DurationsReporter } from './test/durations-reporter';
import { LongestFirstSequencer } from './test/sequencer';
import { tierProjects } from './test/tier-projects';

export default defineConfig({
  test: {
    // Bounds for a test that hangs, not a speed check (those live in bench/): CI hosts differ by more
    // than twice in speed, and on the slower ones tests that wait on real processes took 50–60 s
    // (docs/testing.md, "Where a full run's CPU goes").
    testTimeout: 180_000,
    hookTimeout: 240_000,
    pool: 'forks',
    // Four on 2 cores: a full run's processes (tests, Temporal, Chromium, Postgres) keep the cores
    // busy about a third of the time with two, as most files wait on workflows and child processes
    // (docs/testing.md, "Four workers on two cores"). TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 4),
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
