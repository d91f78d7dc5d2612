import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import { createSubscriptionActivities } from './subscriptions';

export interface ActivityDeps {
  db: Knex;
  config: Config;
}

/** All activities, built from their dependencies (Temporal samples' factory pattern). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createSubscriptionActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
