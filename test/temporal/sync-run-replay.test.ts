import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import proto from '@temporalio/proto';
import { WORKFLOWS_PATH } from '../../temporal/worker';

/**
 * A sync run the previous release started (its API planned the run and passed the plan in)
 * must replay on the current workflow code: a deploy restarts the worker mid-run, and a run that
 * cannot replay would hold the tenant's drain lock for good. The fixture is that release's
 * history (binary protobuf, as fetchHistory returns it) of a run with work at two providers,
 * one of them in two modes, and a skipped one.
 */
describe('sync runs of the previous release', () => {
  it('replay on the current code without a determinism error', async () => {
    const bytes = fs.readFileSync(path.join(__dirname, 'fixtures', 'sync-run-legacy.history.bin'));
    const history = proto.temporal.api.history.v1.History.decode(bytes);
    const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(scheduled.filter((n) => n === 'recordSyncEvent')).toHaveLength(3);
    expect(scheduled.at(-1)).toBe('finishSyncRun');
    await Worker.runReplayHistory({ workflowsPath: WORKFLOWS_PATH }, history, 'sync-legacy-fixture');
  }, 120_000);
});
