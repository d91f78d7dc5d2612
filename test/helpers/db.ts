import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';
import { provided } from './provided';

let shared: Knex | undefined;
let app: Knex | undefined;

/** The run's database as its owner: fixtures. Tests create their own tenants, so files never collide. */
export function testDb(): Knex {
  shared ??= createKnex(provided('databaseUrl'), { max: 5 });
  return shared;
}

/** The run's database as the login role the api and worker connect as: what in-process services use. */
export function appDb(): Knex {
  app ??= createKnex(provided('appDatabaseUrl'), { max: 5 });
  return app;
}
