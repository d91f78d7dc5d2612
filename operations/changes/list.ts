import { z } from 'zod';
import { listApiKeys } from '../../db/api-keys';
import { assistantNames } from '../../db/assistant-grants';
import { findHeldChange, listDecidedChanges, listPendingChanges, type HeldChangeRow } from '../../db/held-changes';
import type { Tx } from '../../db/transaction';
import { defineOperation } from '../types';
import { knownChangeId, noSuchChange } from './schema';

/** A held change as the Changes page shows it, with the name of the key that asked. */
const changeRow = z.object({
  id: z.string(),
  operation: z.string(),
  input: z.record(z.string(), z.unknown()),
  requested_by_key: z.string().nullable(),
  requested_by_assistant: z.string().nullable(),
  key_name: z.string().describe('the name of the key that asked ("" when an assistant did)'),
  assistant_name: z
    .string()
    .nullable()
    .describe('"<assistant> on behalf of <person>" when an assistant asked (docs/assistant-sign-in.md), else null'),
  plan: z.object({ summary: z.string(), targets: z.array(z.string()) }).loose(),
  status: z.string(),
  outcome: z.record(z.string(), z.unknown()).nullable(),
  expires_at: z.date(),
  decided_at: z.date().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});

type Named = HeldChangeRow & { key_name: string; assistant_name: string | null };

async function named(trx: Tx, rows: HeldChangeRow[]): Promise<Named[]> {
  if (rows.length === 0) return [];
  const names = new Map((await listApiKeys(trx)).map((k) => [k.id, k.name || 'unnamed key']));
  const assistants = rows.some((c) => c.requested_by_assistant) ? await assistantNames(trx) : new Map<string, string>();
  return rows.map((c) => ({
    ...c,
    key_name: names.get(c.requested_by_key ?? '') ?? '',
    assistant_name: c.requested_by_assistant
      ? (assistants.get(c.requested_by_assistant) ?? 'a disconnected assistant')
      : null,
  }));
}

/**
 * The Changes page (docs/approvals.md): every write waiting for approval and the 20 decided last,
 * newest first, each with the name of the key or the assistant (and its person) that asked. Read as
 * `changes.get` is (a change is a
 * record of who asked for what, like the audit trail). No REST route and no tool: a key reads a
 * change by the id its held write answered (`GET /v1/changes/{id}`).
 */
export const listChanges = defineOperation({
  name: 'changes.list',
  summary: 'The writes waiting for approval and the last decided ones (the dashboard’s Changes page)',
  scope: 'audit:read',
  write: false,
  input: z.object({}).strict(),
  output: z.object({ pending: z.array(changeRow), decided: z.array(changeRow) }),
  async handler(ctx) {
    return ctx.tx(async (trx) => {
      const [pending, decided] = [await listPendingChanges(trx), await listDecidedChanges(trx)];
      const all = await named(trx, [...pending, ...decided]);
      return { pending: all.slice(0, pending.length), decided: all.slice(pending.length) };
    });
  },
});

/** One change as the Changes page shows it, or the 404 of `changes.get` (no REST route, as above). */
export const viewChange = defineOperation({
  name: 'changes.view',
  summary: 'One held write with the name of the key that asked (the dashboard’s page of a change)',
  scope: 'audit:read',
  write: false,
  input: z.object({ id: z.string().max(100) }).strict(),
  output: changeRow,
  errors: [404],
  async handler(ctx, input) {
    const changeId = knownChangeId(input.id);
    return ctx.tx(async (trx) => {
      const row = await findHeldChange(trx, changeId);
      if (!row) throw noSuchChange();
      return (await named(trx, [row]))[0];
    });
  },
});
