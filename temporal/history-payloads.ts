import {
  defaultPayloadConverter,
  METADATA_ENCODING_KEY,
  type Payload,
  type PayloadCodec,
  type SerializationContext,
} from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils';
// Default import: the package is CommonJS, and Node's ESM loader sees no named exports in it.
import proto from '@temporalio/proto';
import { ENCRYPTED_ENCODING } from './payload-codec';

const { temporal } = proto;
const PAYLOAD_FIELDS = new Set(['metadata', 'data', 'externalPayloads']);

/**
 * A Payload message, recognised by shape: only Payload's fields, and a metadata map of bytes
 * (every payload has at least its encoding there). By shape because at runtime the proto
 * classes are protobufjs reflection types, which `instanceof` cannot test against.
 */
export function isPayload(x: unknown): x is Payload {
  if (!x || typeof x !== 'object' || Array.isArray(x) || x instanceof Uint8Array) return false;
  const { metadata, data } = x as Payload;
  if (!Object.keys(x).every((k) => PAYLOAD_FIELDS.has(k))) return false;
  if (!metadata || typeof metadata !== 'object' || (data != null && !(data instanceof Uint8Array))) return false;
  const values = Object.values(metadata);
  return values.length > 0 && values.every((v) => v instanceof Uint8Array);
}

/**
 * Histories fetched from the server (`handle.fetchHistory()`) hold payloads as stored, i.e.
 * encrypted; the SDK decodes only what it hands to workflow code. These helpers decode a whole
 * history for people and tools reading it (the admin CLI, benches).
 */

type Visit = (payload: Payload, field: string) => Promise<Payload | void>;

// Any Payload message anywhere in the tree (inputs, results, signals, markers, memos, failure
// details, headers), found by its shape so new event types need no list here.
async function visitPayloads(node: unknown, field: string, visit: Visit): Promise<void> {
  if (!node || typeof node !== 'object' || node instanceof Uint8Array) return;
  const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node);
  for (const [k, child] of entries) {
    const path = typeof k === 'number' ? `${field}[${k}]` : field ? `${field}.${k}` : k;
    if (isPayload(child)) {
      const replaced = await visit(child, path);
      if (replaced) (node as Record<string | number, unknown>)[k] = replaced;
    } else await visitPayloads(child, path, visit);
  }
}

/** The namespace and workflow a history belongs to: what its payloads are bound to. */
export interface HistoryOwner {
  namespace: string;
  workflowId: string;
}

type HistoryEvent = NonNullable<History['events']>[number];

/**
 * The serialization context a payload of `e` was encoded under (temporal/payload-codec.ts binds
 * ciphertext to it): the history's own workflow, except for what a workflow sends to or gets from
 * another one (a child's input and result, a signal to another workflow), which belongs to that
 * workflow, and a workflow task's failure, which the worker encodes with no context.
 */
function contextOf(e: HistoryEvent, owner: HistoryOwner): SerializationContext | undefined {
  const other = (
    namespace: string | null | undefined,
    workflowId: string | null | undefined,
  ): SerializationContext => ({
    type: 'workflow',
    namespace: namespace || owner.namespace,
    workflowId: workflowId ?? '',
  });
  if (e.startChildWorkflowExecutionInitiatedEventAttributes) {
    const a = e.startChildWorkflowExecutionInitiatedEventAttributes;
    return other(a.namespace, a.workflowId);
  }
  if (e.signalExternalWorkflowExecutionInitiatedEventAttributes) {
    const a = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    return other(a.namespace, a.workflowExecution?.workflowId);
  }
  const child =
    e.childWorkflowExecutionStartedEventAttributes ??
    e.childWorkflowExecutionCompletedEventAttributes ??
    e.childWorkflowExecutionFailedEventAttributes ??
    e.childWorkflowExecutionCanceledEventAttributes ??
    e.childWorkflowExecutionTimedOutEventAttributes ??
    e.childWorkflowExecutionTerminatedEventAttributes;
  if (child) return other(child.namespace, child.workflowExecution?.workflowId);
  if (e.workflowTaskFailedEventAttributes) return undefined;
  return { type: 'workflow', namespace: owner.namespace, workflowId: owner.workflowId };
}

const isEncrypted = (p: Payload) => {
  const encoding = p.metadata?.[METADATA_ENCODING_KEY];
  return !!encoding && Buffer.from(encoding).toString('utf8') === ENCRYPTED_ENCODING;
};

/**
 * Decode every encrypted payload of `history` (the workflow `owner` names) in place with `codec`,
 * each under the context it was bound to. Payloads that are not encrypted stay as they are, for a
 * reader: the worker's own markers (patches, a local activity's metadata) are written in clear by
 * the SDK's core, and a payload the codec refuses to apply (a plaintext forgery) is evidence to read.
 */
export async function decodeHistory<H extends History>(
  history: H,
  codec: PayloadCodec,
  owner: HistoryOwner,
): Promise<H> {
  for (const e of history.events ?? []) {
    const context = contextOf(e, owner);
    await visitPayloads(e, '', async (p) => (isEncrypted(p) ? (await codec.decode([p], context))[0] : undefined));
  }
  return history;
}

export interface ReadableEvent {
  event_id: string;
  event_type: string;
  event_time: string | null;
  payloads: { field: string; value: unknown }[];
}

/** What a decoded payload holds, as JSON-able data; bytes the converter cannot read stay base64. */
function readable(p: Payload): unknown {
  try {
    return defaultPayloadConverter.fromPayload(p);
  } catch {
    const encoding = p.metadata?.[METADATA_ENCODING_KEY];
    return {
      encoding: encoding ? Buffer.from(encoding).toString('utf8') : null,
      data_base64: Buffer.from(p.data ?? []).toString('base64'),
    };
  }
}

/** The events of an already decoded history, each with its payloads' field paths and values. */
export async function readableEvents(history: History): Promise<ReadableEvent[]> {
  const out: ReadableEvent[] = [];
  for (const e of history.events ?? []) {
    const payloads: ReadableEvent['payloads'] = [];
    await visitPayloads(e, '', async (p, field) => void payloads.push({ field, value: readable(p) }));
    const t = e.eventTime;
    out.push({
      event_id: String(e.eventId),
      event_type: (temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType)).replace(
        /^EVENT_TYPE_/,
        '',
      ),
      event_time: t ? new Date(Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)).toISOString() : null,
      payloads,
    });
  }
  return out;
}
