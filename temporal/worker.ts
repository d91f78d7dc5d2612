import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import { dataConverterFor } from './payload-codec';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export async function createWorker(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
}): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowsPath: WORKFLOWS_PATH,
    activities: createActivities(opts.deps),
    // Payloads at rest are ciphertext under MASTER_KEY (the vault's ring, derived for payloads).
    dataConverter: dataConverterFor(opts.deps.vault),
  });
  return { worker, connection };
}
