import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { inject, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';

const run = promisify(execFile);
const tsx = path.join(ROOT_DIR, 'node_modules/.bin/tsx');

describe('npm run migrate (db/migrate-main.ts)', () => {
  it('brings the database to the latest schema and exits 0 (idempotent on a migrated database)', async () => {
    const { stdout } = await run(tsx, ['db/migrate-main.ts'], { cwd: ROOT_DIR, env: { ...process.env, DATABASE_URL: inject('databaseUrl') } });
    expect(stdout).toContain('latest schema');
  });
  it('without DATABASE_URL: exit 2 and a message naming it', async () => {
    const env = { ...process.env };
    delete env.DATABASE_URL;
    const err = await run(tsx, ['db/migrate-main.ts'], { cwd: ROOT_DIR, env }).then(() => null, (e) => e);
    expect(err).toMatchObject({ code: 2 });
    expect(err.stderr).toContain('DATABASE_URL');
  });
});
