import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../domain/config-error';
import type { Config } from '../runtime/config';
import { generateMasterKey } from './vault';

/**
 * MASTER_KEY from the environment; in development a generated key kept in
 * `<dataDir>/master.key` (mode 600). Production without MASTER_KEY refuses to start.
 */
export function resolveMasterKey(
  config: Pick<Config, 'masterKey' | 'env' | 'dataDir'>,
  log?: (m: string) => void,
): string {
  if (config.masterKey) return config.masterKey;
  if (config.env === 'production') {
    throw new ConfigError(
      'MASTER_KEY',
      'MASTER_KEY is not set: production refuses to start without the key that encrypts provider credentials',
    );
  }
  const file = path.join(config.dataDir, 'master.key');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const key = generateMasterKey();
  fs.writeFileSync(file, key + '\n', { mode: 0o600 });
  log?.(`MASTER_KEY not set: generated a development key into ${file} (set MASTER_KEY in production)`);
  return key;
}
