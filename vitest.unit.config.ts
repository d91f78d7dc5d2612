import { defineConfig } from 'vitest/config';
import config from './vitest.config';
import { tierProjects } from './test/tier-projects';

/**
 * `npm run test:unit`: the pure tier alone (as `vitest run --project pure`), with no Postgres,
 * Temporal or emulator, and the same per-test timeout as `npm test`. Which files are pure is
 * decided by what they use (test/tiers.ts), not by their names.
 */
export default defineConfig({ test: { ...config.test, projects: tierProjects(['pure']) } });
