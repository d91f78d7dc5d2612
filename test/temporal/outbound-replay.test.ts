import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import proto from '@temporalio/proto';
import { WORKFLOWS_PATH } from '../../temporal/worker';

/**
 * An outbound delivery run of the release before deliveries had their own task queue (started
 * on `billing`, two wake-ups drained, waiting for the next) must replay on the current code: the
 * move to the outbound queue (workflows/outbound-delivery.ts) happens only at its next wake-up,
 * never in the history it already has. The fixture is that release's history (binary protobuf,
 * as fetchHistory returns it), recorded against its code with a drain that answered "nothing due".
 */
describe('outbound delivery runs of the previous release', () => {
  it('replay on the current code without a determinism error', async () => {
    const bytes = fs.readFileSync(path.join(__dirname, 'fixtures', 'outbound-legacy.history.bin'));
    const history = proto.temporal.api.history.v1.History.decode(bytes);
    const events = history.events ?? [];
    expect(events[0].workflowExecutionStartedEventAttributes?.taskQueue?.name).toBe('billing');
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'drainOutbound')).toHaveLength(2);
    await Worker.runReplayHistory({ workflowsPath: WORKFLOWS_PATH }, history, 'outbound-legacy-fixture');
  }, 120_000);
});
