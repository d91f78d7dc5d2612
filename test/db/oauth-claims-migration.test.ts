import crypto from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { findConnectionByAccount } from '../../db/connections';
import { createKnex, withDatabase } from '../../db/knex';
import { migrateLatest } from '../../db/migrate';
import * as migration025 from '../../db/migrations/025_oauth_account_claims';
import { testDb } from '../helpers/db';

/**
 * Migration 025 on a database that has psp_b/psp_c connections proven by their pasted keys (what
 * migration 017 and the probe left): they keep routing, re-marked `pasted_key` (an OAuth proof
 * replaces them), other providers' proofs are untouched, and down restores what was there.
 */
describe('migration 025: pasted-key claims of psp_b/psp_c', () => {
  it('keeps them routing as pasted_key claims, leaves other providers alone, and down restores them', async () => {
    const name = `billing_m025_${crypto.randomBytes(4).toString('hex')}`;
    await testDb().raw(`create database "${name}"`);
    const db = createKnex(withDatabase(inject('databaseUrl'), name), { max: 1 });
    try {
      await migrateLatest(db);
      await migration025.down(db);
      const [{ id: tenant }] = await db('tenants').insert({ name: 'before-026' }).returning('id');
      const rows = await db('provider_connections')
        .insert(
          ['psp_a', 'psp_b', 'psp_c', 'store_ios'].map((provider) => ({
            tenant_id: tenant,
            provider,
            account_ref: `acct_${provider}`,
            is_default: true,
            verified_at: db.fn.now(),
            verified_by: 'provider_call',
          })),
        )
        .returning(['id', 'provider']);
      await migration025.up(db);

      const after = await db('provider_connections')
        .where({ tenant_id: tenant })
        .orderBy('provider')
        .pluck('verified_by');
      expect(after).toEqual(['provider_call', 'pasted_key', 'pasted_key', 'provider_call']);
      for (const r of rows)
        expect(await findConnectionByAccount(db, r.provider, `acct_${r.provider}`)).toEqual({
          tenant_id: tenant,
          connection_id: r.id,
        });
      await expect(
        db('provider_connections').where({ provider: 'psp_a' }).update({ verified_by: 'pasted_key' }),
      ).rejects.toThrow(/provider_connections_key_claims/);

      await migration025.down(db);
      expect(await db('provider_connections').where({ tenant_id: tenant }).pluck('verified_by')).toEqual([
        'provider_call',
        'provider_call',
        'provider_call',
        'provider_call',
      ]);
      await migration025.up(db);
    } finally {
      await db.destroy();
      await testDb().raw(`drop database if exists "${name}" with (force)`);
    }
  });
});
