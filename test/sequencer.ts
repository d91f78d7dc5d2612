import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { TIERS } from './tiers';

/** Seconds each test file took in a recorded full run (`RECORD_TEST_DURATIONS=1 npx vitest run`), from the root. */
export const DURATIONS_FILE = 'test/durations.json';

export function recordedDurations(root: string): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, DURATIONS_FILE), 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * Longest files first, from the durations recorded in test/durations.json, so a fresh clone
 * (which has no vitest cache to sort by) does not end its run with one long file on one worker
 * while the other idles. A file with no recorded duration runs first: it may be a long one.
 * Files are kept together by tier (engine, database, pure), longest first within each.
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = recordedDurations(root);
    const cost = (f: TestSpecification) => seconds[path.relative(root, f.moduleId)] ?? Number.POSITIVE_INFINITY;
    // Isolated files first, as vitest's own sequencer does: a shared (non-isolated) worker is
    // reused only while the next file in the queue may share it too, and only within one
    // project; so tier by tier (test/tiers.ts), the engine's (the longest) first.
    const isolatedFirst = (f: TestSpecification) => (f.project.config.isolate ? 0 : 1);
    const tier = (f: TestSpecification) => {
      const i = (TIERS as readonly string[]).indexOf(f.project.name);
      return i === -1 ? TIERS.length : i;
    };
    return [...files].sort((a, b) => isolatedFirst(a) - isolatedFirst(b) || tier(a) - tier(b) || cost(b) - cost(a));
  }
}
