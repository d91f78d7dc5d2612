import type { Knex } from 'knex';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Config } from '../runtime/config';
import { resolveMasterKey } from '../vault/master-key';
import { connectTemporal } from '../temporal/client';
import { decodeHistory, readableEvents, type ReadableEvent } from '../temporal/history-payloads';
import { payloadCodecFor } from '../temporal/payload-codec';
import { TENANT_ATTR } from '../temporal/search-attributes';
import { recordOperatorAudit } from '../db/audit';

export interface DecodedHistory {
  workflow_id: string;
  run_id: string;
  tenant_id: string | null;
  events: ReadableEvent[];
}

/**
 * `workflow:history`: a workflow's history with its payloads decrypted under MASTER_KEY. Payloads
 * are ciphertext on the server (and in the Temporal UI), so this is how an operator reads them.
 * Reading a tenant's decrypted data is recorded in that tenant's audit trail.
 */
export async function runWorkflowHistory(
  db: Knex,
  config: Config,
  workflowId: string,
  runId?: string,
): Promise<DecodedHistory> {
  const masterKey = resolveMasterKey(config);
  // Without TEMPORAL_ADDRESS, the dev server `npm start` runs.
  const address = config.temporalAddress ?? `127.0.0.1:${config.temporalDevPort}`;
  const { connection, client } = await connectTemporal(address, config.temporalNamespace, masterKey);
  try {
    const handle = client.workflow.getHandle(workflowId, runId);
    let described;
    try {
      described = await handle.describe();
    } catch (e) {
      if (e instanceof WorkflowNotFoundError)
        throw new NotFound(
          `no workflow "${workflowId}"${runId ? ` run ${runId}` : ''} in namespace ${config.temporalNamespace}`,
        );
      throw e;
    }
    // Reading applies nothing: every layout is read (plaintext, and ciphertext from before the
    // binding), each ciphertext under the workflow it is bound to; one copied from elsewhere fails.
    const reader = payloadCodecFor(masterKey, { policy: { allowPlaintext: true, allowUnbound: true } });
    const history = await decodeHistory(await handle.fetchHistory(), reader, {
      namespace: config.temporalNamespace,
      workflowId,
    });
    const tenantId = described.typedSearchAttributes.get(TENANT_ATTR) ?? null;
    if (tenantId)
      await recordOperatorAudit(db, {
        tenantId,
        action: 'workflow.read_history',
        detail: { workflow_id: workflowId, run_id: described.runId },
      });
    return {
      workflow_id: workflowId,
      run_id: described.runId,
      tenant_id: tenantId,
      events: await readableEvents(history),
    };
  } finally {
    await connection.close();
  }
}

export class NotFound extends Error {}

/** One line per event, its decoded payloads indented under it. */
export function formatHistory(h: DecodedHistory): string {
  const lines = [`workflow_id: ${h.workflow_id}`, `run_id: ${h.run_id}`, `tenant_id: ${h.tenant_id ?? '-'}`];
  for (const e of h.events) {
    lines.push(`${e.event_id.padStart(4)}  ${e.event_type}  ${e.event_time ?? ''}`.trimEnd());
    for (const p of e.payloads) lines.push(`        ${p.field} = ${JSON.stringify(p.value)}`);
  }
  return lines.join('\n');
}
