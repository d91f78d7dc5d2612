import { Client, Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from './search-attributes';

export interface TemporalClients {
  connection: Connection;
  client: Client;
}

export async function connectTemporal(address: string, namespace: string): Promise<TemporalClients> {
  const connection = await Connection.connect({ address });
  return { connection, client: new Client({ connection, namespace }) };
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
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { connection } = await connectTemporal(address, namespace);
      try {
        await registerSearchAttributes(connection, namespace);
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}
