import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTemporal, type TemporalClients } from '../../temporal/client';
import { startGrantExpiry } from '../../temporal/workflow-starts';
import { BUILD_IDS_ATTR } from '../../workflows/search-attributes';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

/**
 * A workflow our clients start carries Temporal's `BuildIds` at the value its first completed task
 * leaves it at, so the server has no second visibility write to make for it (temporal/build-ids.ts).
 * Run on the real worker (`buildId: ''`) and the run's Temporal server.
 */
describe('BuildIds preset at start', () => {
  let w: Awaited<ReturnType<typeof startTestWorker>>;
  let ours: TemporalClients;
  beforeAll(async () => {
    w = await startTestWorker();
    ours = await connectTemporal(inject('temporalAddress'), 'default', w.vault);
  });
  afterAll(async () => {
    await ours?.connection.close();
    await w?.stop();
  });

  const startGrant = async (client: TemporalClients['client']) => {
    const input = {
      tenantId: crypto.randomUUID(),
      grantId: crypto.randomUUID(),
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    };
    const handle = await startGrantExpiry(client, w.taskQueue, input);
    // The first task completes once the worker has set the grant's timer.
    await until(
      'the first workflow task completed',
      () => handle.fetchHistory(),
      (h) => (h.events ?? []).some((e) => e.timerStartedEventAttributes),
    );
    const history = await handle.fetchHistory();
    const started = history.events![0].workflowExecutionStartedEventAttributes!;
    const atStart = started.searchAttributes?.indexedFields?.BuildIds;
    const after = (await handle.describe()).typedSearchAttributes.get(BUILD_IDS_ATTR);
    await handle.terminate('test done');
    return { atStart, after };
  };

  it('is what the first completed task leaves it at: nothing for the server to write again', async () => {
    const { atStart, after } = await startGrant(ours.client);
    expect(atStart, 'the start names BuildIds').toBeDefined();
    expect(JSON.parse(Buffer.from(atStart!.data!).toString('utf8'))).toEqual(['unversioned']);
    // Unchanged by the first task: the worker names no build (a named one would add `unversioned:<build>`).
    expect(after).toEqual(['unversioned']);
  });

  it('a client without it starts the workflow bare, and the first task changes the attribute (the second write)', async () => {
    const { atStart, after } = await startGrant(w.client);
    expect(atStart).toBeUndefined();
    // The server's own value for a worker that names no build, set on the first completed task.
    expect(after).toEqual(['unversioned', 'unversioned']);
  });
});
