import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { hashSecretKey } from '../db/key-material';
import { SCOPES } from '../domain/scopes';
import { insertApiKey } from '../db/api-keys';

/**
 * `npm start` prints the same demo key on every start: the value is kept in a local,
 * owner-only file under the data dir (development only) and re-minted when revoked.
 */
export async function reuseOrMintDemoKey(db: Knex, dataDir: string, tenantId: string): Promise<string> {
  const file = path.join(dataDir, 'demo-key');
  if (fs.existsSync(file)) {
    const key = fs.readFileSync(file, 'utf8').trim();
    const row = await db('api_keys')
      .where({ key_hash: hashSecretKey(key), tenant_id: tenantId })
      .whereNull('revoked_at')
      .first('id');
    if (row) return key;
  }
  const { secret_key } = await insertApiKey(db, tenantId, [...SCOPES], { name: 'demo (npm start)' });
  fs.writeFileSync(file, secret_key + '\n', { mode: 0o600 });
  return secret_key;
}
