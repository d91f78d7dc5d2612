import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKnex, withDatabase } from '../../db/knex';
import { appliedMigrations, migrateLatest } from '../../db/migrate';
import { testDb } from '../helpers/db';
import { rlsGaps, tenantTables } from '../helpers/rls';

/** The schema baseline on a database of its own: a new install, and one the earlier migrations made. */
describe('the schema baseline', () => {
  const name = `billing_baseline_${crypto.randomBytes(4).toString('hex')}`;
  let db: Knex;
  const catalogue = async () =>
    (
      await db.raw(`select count(*)::int as n from pg_class c join pg_namespace s on s.oid = c.relnamespace
                     where s.nspname = 'public'`)
    ).rows[0].n as number;

  beforeAll(async () => {
    await testDb().raw(`create database "${name}"`);
    db = createKnex(withDatabase(inject('databaseUrl'), name), { max: 1 });
  });
  afterAll(async () => {
    await db?.destroy();
    await testDb().raw(`drop database if exists "${name}" with (force)`);
  });

  it('makes the whole schema on an empty database, with every tenant table forced under row-level security', async () => {
    await migrateLatest(db);
    const applied = await appliedMigrations(db);
    expect(applied[0]).toBe('001_baseline');
    const tables = await tenantTables(db);
    expect(tables).toEqual(await tenantTables(testDb()));
    expect(await rlsGaps(db)).toEqual([]);
  });

  it('records itself and changes nothing where the earlier migrations made the schema', async () => {
    const before = await catalogue();
    // What an install made before the squash holds: the old names, not the baseline's.
    await db('knex_migrations').where({ name: '001_baseline' }).del();
    await db('knex_migrations').insert([
      { name: '001_schema', batch: 1, migration_time: new Date() },
      { name: '051_receipt_renewal_quiet', batch: 1, migration_time: new Date() },
    ]);
    await migrateLatest(db);
    expect(await appliedMigrations(db)).toContain('001_baseline');
    expect(await catalogue()).toBe(before);
  });
});
