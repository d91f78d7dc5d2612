import type { PayloadCodec } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils';
import { decodeHistory } from '../../temporal/history-payloads';

/**
 * Everything a person reading a workflow history could read, as text: every string and every
 * byte field, after `codec` decoded the payloads (bound to `workflowId`) (what an operator with the key sees) or as
 * stored (no codec: what anyone with access to Temporal sees). JSON.stringify would render
 * payload bytes as numbers and so hide what they say.
 */
export async function historyText(
  history: History,
  decodeWith?: { codec: PayloadCodec; workflowId: string },
): Promise<string> {
  const decoded = decodeWith
    ? await decodeHistory(history, decodeWith.codec, { namespace: 'default', workflowId: decodeWith.workflowId })
    : history;
  const out: string[] = [];
  const stack: unknown[] = [decoded];
  while (stack.length) {
    const v = stack.pop();
    if (v instanceof Uint8Array) out.push(Buffer.from(v).toString('utf8'));
    else if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === 'object') stack.push(...Object.values(v));
  }
  return out.join('\n');
}
