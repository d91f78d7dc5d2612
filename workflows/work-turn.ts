import { sleep } from '@temporalio/workflow';
import { isParked, type Parked } from '../domain/import-concurrency';

/**
 * Calls an import or reconciliation page until it runs: a page its tenant had no turn free for
 * answered `parked` without holding a worker slot, and is asked again after a durable timer.
 */
export async function inTurn<T>(page: () => Promise<T | Parked>): Promise<T> {
  for (;;) {
    const r = await page();
    if (!isParked(r)) return r;
    await sleep(r.parkedMs);
  }
}
