import type { PayloadCodec } from '@temporalio/common';

type PayloadLike = { metadata?: Record<string, Uint8Array | null> | null; data?: Uint8Array | null };
const isPayload = (v: unknown): v is PayloadLike => !!v && typeof v === 'object' && 'data' in v && 'metadata' in v && (v as PayloadLike).data instanceof Uint8Array;

/**
 * Everything a person reading a workflow history could read, as text: every string and every
 * payload's bytes, after `codecs` decode them (what an operator with the key sees) or as stored
 * (no codecs: what anyone with access to Temporal sees). JSON.stringify would render payload
 * bytes as numbers and so hide what they say.
 */
export async function historyText(history: unknown, codecs: PayloadCodec[] = []): Promise<string> {
  const out: string[] = [];
  const stack: unknown[] = [history];
  while (stack.length) {
    const v = stack.pop();
    if (isPayload(v)) {
      let payloads = [v as never];
      for (const c of [...codecs].reverse()) payloads = (await c.decode(payloads)) as never[];
      const p = payloads[0] as PayloadLike;
      for (const m of Object.values(p.metadata ?? {})) if (m) out.push(Buffer.from(m).toString('utf8'));
      out.push(Buffer.from(p.data ?? new Uint8Array()).toString('utf8'));
    } else if (v instanceof Uint8Array) out.push(Buffer.from(v).toString('utf8'));
    else if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === 'object') stack.push(...Object.values(v));
  }
  return out.join('\n');
}
