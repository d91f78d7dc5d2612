import { Client, Connection, type WorkflowClientInterceptor } from '@temporalio/client';
import { retryUntil, within } from '../runtime/deadline';
import type { Vault } from '../vault/vault';
import { dataConverterFor } from './payload-codec';
import { SEARCH_ATTRIBUTES } from './search-attributes';
import { presetBuildIdsInterceptor } from './build-ids';

export interface TemporalClients {
  connection: Connection;
  client: Client;
}

/**
 * A connection and a workflow client with the payload codec: the key (a Vault, or a MASTER_KEY
 * value) is required so no client of ours writes plaintext payloads or fails to read ciphertext.
 */
export async function connectTemporal(
  address: string,
  namespace: string,
  keys: Vault | string,
): Promise<TemporalClients> {
  const connection = await Connection.connect({ address });
  return { connection, client: workflowClient(connection, namespace, keys) };
}

/**
 * Our workflow client on a connection: the payload codec (MASTER_KEY) and the BuildIds preset
 * (temporal/build-ids.ts) always, then `interceptors` (tracing). Every process that starts workflows
 * builds its client here, so none starts one without either.
 */
export function workflowClient(
  connection: Connection,
  namespace: string,
  keys: Vault | string,
  interceptors: WorkflowClientInterceptor[] = [],
): Client {
  return new Client({
    connection,
    namespace,
    dataConverter: dataConverterFor(keys),
    interceptors: { workflow: [presetBuildIdsInterceptor(), ...interceptors] },
  });
}

/**
 * Register our search attributes on a cluster we did not start (the dev server gets them as flags).
 * Already-registered attributes are fine.
 */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const searchAttributes: Record<string, number> = {};
  // 2 = INDEXED_VALUE_TYPE_KEYWORD
  for (const a of SEARCH_ATTRIBUTES) searchAttributes[a.name] = 2;
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
  } catch (err) {
    const msg = String((err as Error).message);
    if (!/already exists/i.test(msg)) throw err;
  }
}

/** Register the search attributes once the cluster answers (it may still be starting, e.g. under compose). */
export async function ensureSearchAttributes(address: string, namespace: string, timeoutMs = 120_000): Promise<void> {
  await retryUntil(timeoutMs, 2000, async () => {
    // Only the operator service: no workflow client, so no key needed.
    const connection = await Connection.connect({ address });
    try {
      await registerSearchAttributes(connection, namespace);
    } finally {
      await connection.close();
    }
  });
}

/**
 * A Temporal call bounded twice: the gRPC deadline makes the server give up, and a local timer
 * (a `TimeoutError`) makes us give up even when the connection itself hangs.
 */
export function callWithin<T>(client: Client, ms: number, call: () => Promise<T>): Promise<T> {
  return within(ms, client.withDeadline(Date.now() + ms, call));
}
