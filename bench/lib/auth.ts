import type { Knex } from 'knex';
import type { Principal } from '../../api/auth';
import { verifyKey } from '../../api/gate';

/** The key-check piece on its own, as the benchmarks time it: SHA-256 + api_keys lookup (the gate fuses it with the token take). */
export const authenticate = (db: Knex, token: string): Promise<Principal> => verifyKey(db, { authorization: `Bearer ${token}` });
