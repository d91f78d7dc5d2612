import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProjectInlineConfiguration } from 'vitest/config';
import { testFilesByTier, type Tier } from './tiers';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What each tier's global setup starts: nothing, the run's database, or that and Temporal with the workflow bundle. */
const SETUP: Record<Tier, string[]> = {
  pure: [],
  database: ['test/global-setup.ts'],
  engine: ['test/global-setup.ts', 'test/engine-setup.ts'],
};

/**
 * One vitest project per tier (test/tiers.ts), each including exactly its files and starting
 * only what they need. They take the root config's options (`extends: true`): the timeouts hold
 * in every tier, so a pure property test on a loaded machine has the same three minutes as the rest.
 */
export function tierProjects(tiers: Tier[] = ['engine', 'database', 'pure']): TestProjectInlineConfiguration[] {
  const files = testFilesByTier(ROOT);
  return tiers.map((tier) => ({
    extends: true,
    test: { name: tier, include: files[tier], globalSetup: SETUP[tier] },
  }));
}
