import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import type { Adapters } from '../providers';
import type { Vault } from '../providers/vault';
import { createPacer, type Pacer } from '../providers/pacing';
import { createProviderActivities } from './providers';
import { createSubscriptionActivities } from './subscriptions';
import { createRetireActivities, createSyncActivities } from './sync';
import { createLifecycleActivities } from './lifecycle';
import { createStorePurchaseActivities } from './store-purchases';

export interface ActivityDeps {
  db: Knex;
  config: Config;
  vault: Vault;
  adapters: Adapters;
  /** Paces provider calls to their documented rate limits; one per worker process (made here when absent). */
  pacer?: Pacer;
}

/** All activities, built from their dependencies (Temporal samples' factory pattern). */
export function createActivities(given: ActivityDeps) {
  const deps = { ...given, pacer: given.pacer ?? createPacer() };
  return {
    ...createSubscriptionActivities(deps),
    ...createProviderActivities(deps),
    ...createSyncActivities(deps),
    ...createRetireActivities(deps),
    ...createLifecycleActivities(deps),
    ...createStorePurchaseActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
