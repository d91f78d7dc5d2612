import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import type { Adapters } from '../providers';
import type { Vault } from '../vault/vault';
import type { Pacer } from '../providers/pacing';
import type { LifecycleEvent } from '../domain/subscription';

/** Hands events to a customer's lifecycle workflow (signal-with-start); the worker supplies it (temporal/worker.ts). */
export type LifecycleHandOver = (
  customer: { tenantId: string; provider: string; customerKey: string },
  events: LifecycleEvent[],
) => Promise<void>;

/**
 * What every activity factory is built from. Its own file, so the factories import it without
 * importing `activities/index.ts`, which imports them.
 */
export interface ActivityDeps {
  db: Knex;
  config: Config;
  vault: Vault;
  adapters: Adapters;
  /**
   * Paces provider calls to their documented rate limits; one per worker process (made in createActivities when
   * absent).
   */
  pacer?: Pacer;
  /** Imports hand each subscription to its customer's workflow through this (absent: imports cannot run here). */
  handOverLifecycle?: LifecycleHandOver;
  /** Ensures a tenant's reconciliation schedules with the worker's client (temporal/worker.ts; absent: not here). */
  ensureReconciliationSchedules?: (tenantId: string) => Promise<void>;
}
