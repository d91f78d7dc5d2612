import { describe, expect, it } from 'vitest';
import { OWNER_CONNECTION_USES, ownerConnectionUses } from '../../scripts/check-imports';

/**
 * The owner connection bypasses row-level security: only the listed places may open it
 * (scripts/check-imports.ts, run over the whole service by `npm run checks`).
 */
describe('the owner connection is opened only where RLS must be bypassed by design (lint)', () => {
  const opensOwner = `import { openDatabase } from '../db/open-database';
const { db } = await openDatabase(config, { pool: { max: 2 }, as: 'owner' });`;

  it('fails a file outside the list that opens the owner connection, or makes a knex by hand', () => {
    expect(ownerConnectionUses('operations/products/create.ts', opensOwner)).toEqual([
      expect.stringContaining('operations/products/create.ts:2 opens the owner connection (openDatabase)'),
    ]);
    expect(ownerConnectionUses('api/main.ts', `const db = createKnex(process.env.DATABASE_URL!, { max: 1 });`)).toEqual(
      [expect.stringContaining('api/main.ts:1 opens the owner connection (createKnex)')],
    );
  });

  it('lets through the login role, and the listed places with their reasons', () => {
    expect(ownerConnectionUses('api/main.ts', `await openDatabase(config, { pool: { max: 10 } });`)).toEqual([]);
    expect(ownerConnectionUses('api/main.ts', `await openDatabase(config, { as: 'app' });`)).toEqual([]);
    expect(ownerConnectionUses('scripts/admin.ts', opensOwner)).toEqual([]);
    expect(Object.keys(OWNER_CONNECTION_USES).sort()).toEqual([
      'db/migrate-main.ts',
      'db/open-database.ts',
      'scripts/admin.ts',
      'scripts/start.ts',
    ]);
  });
});
