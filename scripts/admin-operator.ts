import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { executeOperation } from '../operations/execute';
import type { OperatorActor } from '../operations/actor';
import type { Services } from '../operations/services';
import type { Operation } from '../operations/types';
import type { Adapters } from '../providers';
import type { Config } from '../runtime/config';
import { createLogger, type LogDestination } from '../runtime/logger';
import { resolveMasterKey } from '../vault/master-key';
import { createVault, type Vault } from '../vault/vault';

/**
 * The admin CLI as an actor: a command that changes one tenant runs that tenant's operation as
 * the `operator`, so its validation, its transaction (the tenant's, row-level security on) and
 * its audit row are the operation's, as for a key or a person (docs/operations.md, "The admin
 * CLI is an operator"). A refusal is the operation's `ApiError`.
 */
export async function runAsOperator(
  at: { db: Knex; config: Config; logTo: LogDestination },
  tenantId: string,
  op: Operation,
  input: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const { db, config } = at;
  const services: Services = { db, config, temporal: null, vault: lazyVault(config), adapters: NO_PROVIDERS };
  const actor: OperatorActor = { kind: 'operator', tenantId };
  return (await executeOperation(op, actor, input, {
    requestId: crypto.randomUUID(),
    services,
    log: createLogger(config.logLevel, at.logTo),
    surface: 'cli',
  })) as Record<string, unknown>;
}

/** One tenant's operation as the operator, on the command's connection and log (`runAsOperator`). */
export type AsOperator = (
  tenantId: string,
  op: Operation,
  input: Record<string, unknown>,
) => Promise<Record<string, unknown>>;

/**
 * The CLI's operations reach no provider; loading the adapters would cost every command a
 * second of start-up. An operation that does reach one fails here, saying so, rather than
 * quietly: give it real adapters (providers/index.ts createAdapters) when one is added.
 */
const NO_PROVIDERS = new Proxy({} as Adapters, {
  get(_target, prop) {
    throw new Error(`the admin CLI's operations reach no provider (asked for ${String(prop)})`);
  },
});

/** Made on first use: the key operations touch no secret, so minting a key needs no MASTER_KEY. */
function lazyVault(config: Config): Vault {
  let vault: Vault | undefined;
  return new Proxy({} as Vault, {
    get(_target, prop) {
      vault ??= createVault(resolveMasterKey(config));
      const value = Reflect.get(vault, prop) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(vault) : value;
    },
  });
}
