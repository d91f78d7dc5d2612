import { inject } from 'vitest';
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';

let shared: Knex | undefined;

/** The run's database (owner connection). Tests create their own tenants, so files never collide. */
export function testDb(): Knex {
  shared ??= createKnex(inject('databaseUrl'), { max: 5 });
  return shared;
}
