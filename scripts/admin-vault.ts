import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import { resolveMasterKey } from '../runtime/master-key';
import { createVault } from '../providers/vault';
import { reencryptAll } from '../db/reencrypt';

export async function runReencrypt(db: Knex, config: Config): Promise<Record<string, unknown>> {
  const vault = createVault(resolveMasterKey(config));
  return { ...(await reencryptAll(db, vault)) };
}
