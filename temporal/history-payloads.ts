import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils';
// Default import: the package is CommonJS, and Node's ESM loader sees no named exports in it.
import proto from '@temporalio/proto';

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

/** Decode every payload of `history` in place with `codec` (unencrypted payloads stay as they are). */
export async function decodeHistory<H extends History>(history: H, codec: PayloadCodec): Promise<H> {
  await visitPayloads(history, '', async (p) => (await codec.decode([p]))[0]);
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
    return { encoding: encoding ? Buffer.from(encoding).toString('utf8') : null, data_base64: Buffer.from(p.data ?? []).toString('base64') };
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
      event_type: (temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, ''),
      event_time: t ? new Date(Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)).toISOString() : null,
      payloads,
    });
  }
  return out;
}
