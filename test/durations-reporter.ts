import fs from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { DURATIONS_FILE, recordedDurations } from './sequencer';

/**
 * With RECORD_TEST_DURATIONS=1, writes how long each test file took (wall time from import to
 * its last hook, in seconds) into test/durations.json, merged with what is there, for the
 * longest-first order (test/sequencer.ts). Record on a full run: durations measured while other
 * files compete for the same cores are the ones that matter.
 */
export class DurationsReporter implements Reporter {
  private root = process.cwd();

  onInit(ctx: { config: { root: string } }): void {
    this.root = ctx.config.root;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const seconds = recordedDurations(this.root);
    for (const m of testModules) {
      if (m.state() !== 'passed') continue;
      const d = m.diagnostic();
      seconds[path.relative(this.root, m.moduleId)] =
        Math.round((d.collectDuration + d.setupDuration + d.environmentSetupDuration + d.duration) / 100) / 10;
    }
    const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
    fs.writeFileSync(path.join(this.root, DURATIONS_FILE), `${JSON.stringify(sorted, null, 2)}\n`);
  }
}
