import crypto from 'node:crypto';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { ROOT_DIR } from '../../runtime/config';
import { registerStorePurchaseWorkflow, type RegisterStorePurchaseInput } from '../../workflows/store-purchase';
import { KIND_ATTR, TENANT_ATTR } from '../../temporal/search-attributes';
import { decodeHistory, isPayload, readableEvents } from '../../temporal/history-payloads';
import {
  BINDING_NAMESPACE_WORKFLOW,
  dataConverterFor,
  ENCRYPTED_ENCODING,
  METADATA_ENCRYPTION_BINDING,
  payloadCodecFor,
} from '../../temporal/payload-codec';
import { newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';

const run = promisify(execFile);
const { temporal } = proto;
const decode = (b: Uint8Array) => Buffer.from(b).toString('utf8');

/** Every Payload in a history with where it sits, search attributes apart (indexed, so plaintext by design). */
function payloadsOf(node: unknown, at = ''): { at: string; payload: Payload }[] {
  if (!node || typeof node !== 'object' || node instanceof Uint8Array) return [];
  if (isPayload(node)) return [{ at, payload: node }];
  return Object.entries(node).flatMap(([k, v]) => (k === 'searchAttributes' ? [] : payloadsOf(v, `${at}.${k}`)));
}

/**
 * Payloads are ciphertext in Temporal's history: a real worker and a real server, read back by a
 * client without the codec (what the server, its database and the Temporal UI see).
 */
describe('Temporal payloads are encrypted at rest', () => {
  let w: Awaited<ReturnType<typeof startTestWorker>>;
  let plainConnection: Connection;
  let plain: Client;
  const MARKER = `codec-marker-${crypto.randomBytes(8).toString('hex')}`;
  let handle: WorkflowHandle;
  let tenantId: string;

  /**
   * A short workflow with an activity: a store purchase registration naming a connection the
   * tenant does not have (the read activity answers a refusal, and the workflow ends with it).
   */
  async function registration(client: Client, note: string, taskQueue = w.taskQueue) {
    const t = await newTenant('codec');
    // The marker rides in the input as an extra field the workflow ignores.
    const input = {
      tenantId: t.tenant_id,
      provider: 'store_ios',
      connectionId: crypto.randomUUID(),
      mode: 'test',
      appUserId: 'codec_user',
      signedTransaction: 'x',
      note,
    };
    const handle = await client.workflow.start(registerStorePurchaseWorkflow, {
      taskQueue,
      workflowId: `codec-${crypto.randomUUID()}`,
      args: [input as RegisterStorePurchaseInput],
      typedSearchAttributes: [
        { key: TENANT_ATTR, value: t.tenant_id },
        { key: KIND_ATTR, value: 'store-purchase' },
      ],
    });
    return { tenantId: t.tenant_id, handle };
  }
  const REFUSED = { ok: false, status: 400, error: 'invalid_request', detail: expect.any(String) };
  const rawHistory = async (h: WorkflowHandle) => {
    const resp = await plain.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId: h.workflowId },
    });
    return {
      history: resp.history!,
      bytes: Buffer.from(temporal.api.workflowservice.v1.GetWorkflowExecutionHistoryResponse.encode(resp).finish()),
    };
  };

  beforeAll(async () => {
    w = await startTestWorker();
    plainConnection = await Connection.connect({ address: inject('temporalAddress') });
    plain = new Client({ connection: plainConnection, namespace: 'default' });
    ({ handle, tenantId } = await registration(w.client, MARKER));
    expect(await handle.result()).toEqual(REFUSED);
  });
  afterAll(async () => {
    await w?.stop();
    await plainConnection?.close();
  });

  it('the raw history holds no plaintext: every payload is binary/encrypted under the current key, bound to its workflow', async () => {
    const { history, bytes } = await rawHistory(handle);
    expect(bytes.toString('latin1')).not.toContain(MARKER);
    expect(JSON.stringify(history)).not.toContain(MARKER);
    const found = payloadsOf(history.events);
    // Input, activity input and result, workflow result at least.
    expect(found.length).toBeGreaterThanOrEqual(4);
    for (const { at, payload } of found) {
      expect([at, decode(payload.metadata![METADATA_ENCODING_KEY])]).toEqual([at, ENCRYPTED_ENCODING]);
      expect([at, decode(payload.metadata!['encryption-key-id'])]).toEqual([at, w.vault.currentKeyId]);
      expect([at, decode(payload.metadata![METADATA_ENCRYPTION_BINDING])]).toEqual([at, BINDING_NAMESPACE_WORKFLOW]);
    }
    const started = history.events![0].workflowExecutionStartedEventAttributes!;
    expect(decode(started.input!.payloads![0].metadata![METADATA_ENCODING_KEY])).toBe(ENCRYPTED_ENCODING);
    // A client without the codec cannot read the result either.
    await expect(plain.workflow.getHandle(handle.workflowId).result()).rejects.toThrow();
  });

  it('decoded with the codec, the marker is back in the workflow input', async () => {
    const { history } = await rawHistory(handle);
    const events = await readableEvents(
      await decodeHistory(history, payloadCodecFor(w.vault), { namespace: 'default', workflowId: handle.workflowId }),
    );
    expect(events[0].event_type).toBe('WORKFLOW_EXECUTION_STARTED');
    expect(events[0].payloads).toContainEqual({
      field: 'workflowExecutionStartedEventAttributes.input.payloads[0]',
      value: expect.objectContaining({ note: MARKER, tenantId }),
    });
    expect(events.at(-1)!.event_type).toBe('WORKFLOW_EXECUTION_COMPLETED');
  });

  it('with TEMPORAL_ALLOW_PLAINTEXT_PAYLOADS=1, a run started before encryption (plaintext input) completes, and both kinds of history replay', async () => {
    // An upgraded install whose histories predate encryption runs its workers with the switch on.
    const upgraded = await startTestWorker({
      masterKey: w.config.masterKey,
      config: { temporalPayloads: { allowPlaintext: true, allowUnbound: false } },
    });
    try {
      const before = `pre-codec-${crypto.randomBytes(6).toString('hex')}`;
      const old = await registration(plain, before, upgraded.taskQueue);
      // The worker reads the plaintext input (passed through) and writes the rest encrypted.
      expect(await upgraded.client.workflow.getHandle(old.handle.workflowId).result()).toEqual(REFUSED);
      const { bytes, history: mixed } = await rawHistory(old.handle);
      expect(bytes.toString('latin1')).toContain(before); // the check above would have seen plaintext
      const histories = async () => [
        { workflowId: handle.workflowId, history: (await rawHistory(handle)).history },
        { workflowId: old.handle.workflowId, history: mixed },
      ];
      const results = Worker.runReplayHistories(
        {
          workflowBundle: { codePath: inject('workflowBundlePath') },
          dataConverter: dataConverterFor(w.vault, { policy: upgraded.config.temporalPayloads }),
        },
        await histories(),
      );
      const replayed: string[] = [];
      for await (const r of results) {
        expect([r.workflowId, r.error]).toEqual([r.workflowId, undefined]);
        replayed.push(r.workflowId);
      }
      expect(replayed.sort()).toEqual([handle.workflowId, old.handle.workflowId].sort());
      // Without the switch (a new install's default) the plaintext run does not replay; the encrypted one does.
      const strict = new Map<string, unknown>();
      for await (const r of Worker.runReplayHistories(
        { workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: dataConverterFor(w.vault) },
        await histories(),
      ))
        strict.set(r.workflowId, r.error);
      expect(strict.get(handle.workflowId)).toBeUndefined();
      expect(String(strict.get(old.handle.workflowId))).toMatch(/unencrypted payload was refused/);
    } finally {
      await upgraded.stop();
    }
  });

  describe('admin CLI workflow:history', () => {
    const admin = (masterKey: string, ...args: string[]) =>
      run(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'scripts/admin.ts'), ...args], {
        cwd: ROOT_DIR,
        env: {
          ...process.env,
          DATABASE_URL: inject('databaseUrl'),
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_NAMESPACE: 'default',
          MASTER_KEY: masterKey,
          LOG_LEVEL: 'silent',
        },
      }).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
      );

    it('prints the decoded payloads (JSON and text) and records the read in the tenant’s audit trail', async () => {
      // Rotated since: the workflow's key is now the older entry, and still decrypts.
      const rotated = `k2:${crypto.randomBytes(32).toString('base64')},${w.config.masterKey}`;
      const j = await admin(rotated, 'workflow:history', '--id', handle.workflowId, '--json');
      expect(j.stderr).toBe('');
      expect(j.code).toBe(0);
      const out = JSON.parse(j.stdout);
      expect(out).toMatchObject({ workflow_id: handle.workflowId, tenant_id: tenantId, run_id: expect.any(String) });
      expect(out.events[0].payloads).toContainEqual(
        expect.objectContaining({ value: expect.objectContaining({ note: MARKER }) }),
      );
      const done = out.events.find((e: { event_type: string }) => e.event_type === 'WORKFLOW_EXECUTION_COMPLETED');
      expect(done.payloads[0].value).toEqual(REFUSED);

      const text = await admin(w.config.masterKey!, 'workflow:history', '--id', handle.workflowId, '--run', out.run_id);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^\s+1 {2}WORKFLOW_EXECUTION_STARTED/m);
      expect(text.stdout).toContain(MARKER);

      const audit = await testDb()('audit_entries').where({
        tenant_id: tenantId,
        action: 'workflow.read_history',
        actor_type: 'operator',
      });
      expect(audit).toHaveLength(2);
      expect(JSON.stringify(audit)).not.toContain(MARKER);
    }, 120_000);

    it('without the key it fails naming MASTER_KEY, printing no payload or key; an unknown workflow is a usage error', async () => {
      const other = `k9:${crypto.randomBytes(32).toString('base64')}`;
      const r = await admin(other, 'workflow:history', '--id', handle.workflowId);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: .*MASTER_KEY/);
      for (const secret of [MARKER, other.split(':')[1], w.config.masterKey!.split(':')[1]])
        expect(r.stderr).not.toContain(secret);

      const missing = await admin(w.config.masterKey!, 'workflow:history', '--id', `no-such-${crypto.randomUUID()}`);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/^error: no workflow/);
      expect((await admin(w.config.masterKey!, 'workflow:history')).stderr).toMatch(/--id is required/);
      expect((await admin(w.config.masterKey!, '--help')).stdout).toContain('workflow:history');
    }, 120_000);
  });
});
