import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { foldDueChartSums } from '../db/chart-fold';
import { foldDueRollups } from '../db/overview-rollups';

/** How often the worker folds the overview's rollups: deltas pile up between passes, the figures stay exact. */
export const FOLD_EVERY_MS = 60_000;

/**
 * The fold job, started with the worker process so no read has to write: the overview rollups
 * (db/overview-rollups.ts) and the chart sums (db/chart-fold.ts: the subscriptions written since
 * the last pass, and those whose revenue grew with time, counted again). A pass over every
 * tenant, then the next one `every` ms after it ends (never two at once): the chart sums lag
 * the writes by at most one pass. A failed pass is logged and the next one tries again.
 */
export function startRollupFolding(db: Knex, log: Logger, every = FOLD_EVERY_MS): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = async () => {
    try {
      const folded = await foldDueRollups(db);
      if (folded > 0) log.info({ tenants: folded }, 'overview rollups folded');
    } catch (err) {
      log.warn({ err }, 'overview rollup fold failed; the next pass retries');
    }
    try {
      const folded = await foldDueChartSums(db);
      if (folded > 0) log.debug({ tenants: folded }, 'chart sums folded');
    } catch (err) {
      log.warn({ err }, 'chart sums fold failed; the next pass retries');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(schedule);
    }, every);
    timer.unref();
  };
  running = pass().finally(schedule);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
