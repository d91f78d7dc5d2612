import crypto from 'node:crypto';
import { listConnectionsSafe } from '../../db/connections';
import type { HeldPlan } from '../../db/held-changes';
import { knownSkus } from '../../db/products';
import type { Tx } from '../../db/transaction';
import { loadProductDetail } from '../products/get';
import { resolveProductRef } from '../products/ref';
import type { Operation } from '../types';

/** Operations that call the providers (the rest write this service's own records only). */
const REACHES_PROVIDERS = new Set(['products.sync', 'sync.run', 'products.retire']);
/** Operations whose input names one product: by `id`, or by `product_id` or `sku` (operations/products/ref.ts). */
const NAMES_PRODUCT = new Set(['products.update', 'products.set_pricing', 'products.sync', 'products.retire']);

const fingerprint = (v: unknown) => crypto.createHash('sha256').update(JSON.stringify(v)).digest('hex');

/**
 * What a held write would change, for the person who decides (docs/approvals.md, "The plan"):
 * a sentence, where it lands (the catalogue here, or the connected providers it calls), the
 * current values it changes (a product as it is now) and a fingerprint of that state. Approval
 * makes the plan again and compares the fingerprints: if the state moved, the change is stale.
 * The same function both times, so the two can only differ when the data did. Throws the
 * write's own refusal when what it names is not there.
 */
export async function planOf(trx: Tx, op: Operation, input: Record<string, unknown>): Promise<HeldPlan> {
  const targets = REACHES_PROVIDERS.has(op.name)
    ? [...new Set((await listConnectionsSafe(trx)).map((c) => c.provider as string))]
    : ['catalogue'];
  if (NAMES_PRODUCT.has(op.name)) {
    // A product that is not there is refused here as the write itself would refuse it (404).
    const id =
      typeof input.id === 'string'
        ? input.id
        : await resolveProductRef(trx, { product_id: input.product_id, sku: input.sku });
    const before = await loadProductDetail(trx, id);
    return { summary: `${op.summary} — product ${before.sku}`, targets, basis: fingerprint(before), before };
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
