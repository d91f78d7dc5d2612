import type { Knex } from 'knex';
import type { Config } from '../runtime/config';

/**
 * Connect the demo tenant to the five emulators (one default connection each). Filled in
 * once the vault and connection repository exist; until then the demo has no connections.
 */
export async function connectDemoProviders(_db: Knex, _config: Config, _tenantId: string): Promise<void> {}
