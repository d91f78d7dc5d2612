import crypto from 'node:crypto';
import { listConnectionsSafe } from '../../db/connections';
import type { HeldPlan } from '../../db/held-changes';
import { knownSkus } from '../../db/products';
import type { Tx } from '../../db/transaction';
import { isUuid } from '../../domain/ids';
import { loadProductDetail } from '../products/get';
import type { Operation } from '../types';

/** Operations that call the providers (the rest write this service's own records only). */
const REACHES_PROVIDERS = new Set(['products.sync', 'sync.run', 'products.retire']);
/** Operations whose input names one product by its id (after a tool's product_id/sku is resolved). */
const NAMES_PRODUCT = new Set(['products.update', 'products.set_pricing', 'products.sync', 'products.retire']);

const fingerprint = (v: unknown) => crypto.createHash('sha256').update(JSON.stringify(v)).digest('hex');

/**
 * What a held write would change, for the person who decides (docs/approvals.md, "The plan"):
 * a sentence, where it lands (the catalogue here, or the connected providers it calls), the
 * current values it changes (a product as it is now) and a fingerprint of that state. Approval
 * makes the plan again and compares the fingerprints: if the state moved, the change is stale.
 * The same function both times, so the two can only differ when the data did.
 */
export async function planOf(trx: Tx, op: Operation, input: Record<string, unknown>): Promise<HeldPlan> {
  const targets = REACHES_PROVIDERS.has(op.name)
    ? [...new Set((await listConnectionsSafe(trx)).map((c) => c.provider as string))]
    : ['catalogue'];
  if (NAMES_PRODUCT.has(op.name) && typeof input.id === 'string' && isUuid(input.id)) {
    const before = await loadProductDetail(trx, input.id).catch(() => null);
    const what = before ? `product ${before.sku}` : 'a product that no longer exists';
    return { summary: `${op.summary} — ${what}`, targets, basis: fingerprint(before), before };
  }
  if (op.name === 'products.create' && typeof input.sku === 'string') {
    const exists = (await knownSkus(trx, [input.sku])).has(input.sku);
    return {
      summary: `${op.summary} — SKU ${input.sku}${exists ? ' (exists now)' : ''}`,
      targets,
      basis: fingerprint({ sku: input.sku, exists }),
      before: null,
    };
  }
  return { summary: op.summary, targets, basis: null, before: null };
}
