import crypto from 'node:crypto';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { createKnex, withDatabase } from '../../db/knex';
import { ROOT_DIR } from '../../runtime/config';
import { testDb } from '../helpers/db';

describe('npm run migrate', () => {
  it('brings an empty database to the latest schema and names the migrations', async () => {
    const name = `billing_migrate_${crypto.randomBytes(4).toString('hex')}`;
    await testDb().raw(`create database "${name}"`);
    const url = withDatabase(inject('databaseUrl'), name);
    try {
      const r = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT_DIR, 'db/migrate-main.ts')],
        {
          env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'silent' },
          cwd: ROOT_DIR,
        },
      );
      expect(r.stdout).toMatch(/^migrations applied: 001_baseline(, |$)/m);
      const db = createKnex(url, { max: 1 });
      try {
        expect(await db.schema.hasTable('sync_runs')).toBe(true);
      } finally {
        await db.destroy();
      }
    } finally {
      await testDb().raw(`drop database if exists "${name}" with (force)`);
    }
  });
});
