import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { findTemporalBinary } from '../../temporal/binary';
import { Connection } from '@temporalio/client';
import { ensureSearchAttributes } from '../../temporal/client';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes';
import { freePort, waitForPort } from '../../runtime/ports';

/** A cluster we did not start (TEMPORAL_ADDRESS, compose) gets our search attributes on start. */
describe('search attributes on an external cluster', () => {
  let kill = () => {};
  afterAll(() => kill());

  it('are registered, and registering again is harmless', async () => {
    const port = await freePort();
    const proc = spawn(
      findTemporalBinary(),
      ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error'],
      { stdio: 'ignore' },
    );
    kill = () => proc.kill('SIGKILL');
    await waitForPort('127.0.0.1', port, 60_000);
    const address = `127.0.0.1:${port}`;

    await ensureSearchAttributes(address, 'default', 30_000);
    await ensureSearchAttributes(address, 'default', 30_000);

    const connection = await Connection.connect({ address });
    try {
      const res = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      for (const a of SEARCH_ATTRIBUTES) expect(Object.keys(res.customAttributes ?? {})).toContain(a.name);
    } finally {
      await connection.close();
    }
  });
});
