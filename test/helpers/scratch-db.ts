import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { inject } from 'vitest';
import { createKnex, withDatabase } from '../../db/knex';
import { loginRoleUrl } from '../../db/login-role';
import { migrateLatest } from '../../db/migrate';
import { testDb } from './db';

/**
 * A migrated database of the file's own, for what is per deployment rather than per tenant (the
 * signing keys): rotating or withdrawing keys in the run's database would change what every
 * other file signs with. `owner` for fixtures, `app` as the login role the api and worker use.
 */
export async function scratchDatabase(
  tag: string,
): Promise<{ url: string; owner: Knex; app: Knex; drop(): Promise<void> }> {
  const name = `billing_${tag}_${crypto.randomBytes(4).toString('hex')}`;
  await testDb().raw(`create database "${name}"`);
  const url = withDatabase(inject('databaseUrl'), name);
  const owner = createKnex(url, { max: 2 });
  await migrateLatest(owner);
  const app = createKnex(loginRoleUrl(url), { max: 4 });
  return {
    url,
    owner,
    app,
    async drop() {
      await app.destroy();
      await owner.destroy();
      await testDb().raw(`drop database if exists "${name}" with (force)`);
    },
  };
}
