import type { Knex } from 'knex';
import type { Client, Connection } from '@temporalio/client';
import type { Config } from '../runtime/config';
import type { Adapters } from '../providers';
import type { Vault } from '../vault/vault';

/** Long-lived dependencies handed to every operation (built once per process). */
export interface Services {
  db: Knex;
  config: Config;
  /** Lazy connection: built at start even when Temporal is down; /readyz reports it. */
  temporal: { connection: Connection; client: Client } | null;
  /** The credential vault: provider credentials, webhook signing secrets. */
  vault: Vault;
  /** One adapter per provider (API calls, OAuth code exchange, webhook verifiers). */
  adapters: Adapters;
}
