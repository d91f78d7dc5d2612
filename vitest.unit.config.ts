import { defineConfig } from 'vitest/config';
import config from './vitest.config';
import { tierProjects } from './test/tier-projects';

/**
 * The pure tier alone (what `npm run test:unit`, `vitest run --project pure`, runs), for
 * `npx vitest run --config vitest.unit.config.ts <files>`: no Postgres, Temporal or emulator.
 * Which files are pure is decided by what they use (test/tiers.ts), not by their names.
 */
export default defineConfig({ test: { ...config.test, projects: tierProjects(['pure']) } });
