import type { Knex } from 'knex';
import type { SyncTarget } from '../domain/providers';
import type { PaymentLinkResult } from '../providers/types';
import { noteReadinessChange } from './outbound-events';

/**
 * What a sync records after a provider accepted a write, in the caller's tenant transaction:
 * the product's object there (with the version it now carries, which is what "synced" is
 * judged on: domain/product-sync.ts) and the apps' purchase entry points.
 */

/** Our record of the product's object at the target, or undefined when it was never created there. */
export async function providerRefOf(
  trx: Knex.Transaction,
  productId: string,
  target: Pick<SyncTarget, 'provider' | 'mode'>,
): Promise<{ external_id: string } | undefined> {
  return trx('product_provider_refs')
    .where({ product_id: productId, provider: target.provider, mode: target.mode })
    .first('external_id');
}

export async function recordProductAt(
  trx: Knex.Transaction,
  tenantId: string,
  target: SyncTarget,
  product: { product_id: string; version: number },
  externalId: string,
): Promise<void> {
  await trx('product_provider_refs')
    .insert({
      tenant_id: tenantId,
      product_id: product.product_id,
      provider: target.provider,
      mode: target.mode,
      external_id: externalId,
      synced_version: product.version,
      synced_at: trx.fn.now(),
    })
    .onConflict(['product_id', 'provider', 'mode'])
    .merge({
      external_id: externalId,
      synced_version: product.version,
      synced_at: trx.fn.now(),
      updated_at: trx.fn.now(),
    });
}

/**
 * A payment link goes to `payment_links`, a plan to `provider_plans`; either way one per (app, product, provider,
 * mode).
 */
export async function recordLinkAt(
  trx: Knex.Transaction,
  tenantId: string,
  target: SyncTarget,
  ids: { appId: string; productId: string },
  link: PaymentLinkResult,
): Promise<void> {
  const row = {
    tenant_id: tenantId,
    app_id: ids.appId,
    product_id: ids.productId,
    connection_id: target.connectionId,
    provider: target.provider,
    mode: target.mode,
    external_id: link.external_id,
  };
  if (link.kind === 'payment_link') {
    await trx('payment_links')
      .insert({ ...row, url: link.url ?? '' })
      .onConflict(['app_id', 'product_id', 'provider', 'mode'])
      .merge({ external_id: link.external_id, url: link.url ?? '', updated_at: trx.fn.now() });
  } else {
    await trx('provider_plans')
      .insert(row)
      .onConflict(['app_id', 'product_id', 'provider', 'mode'])
      .merge({ external_id: link.external_id, updated_at: trx.fn.now() });
  }
}

/** Retirement's last step: the product leaves the catalogue (one active product fewer, which readiness counts). */
export async function deactivateProduct(trx: Knex.Transaction, productId: string): Promise<void> {
  const [row] = await trx('products')
    .where({ id: productId })
    .update({ active: false, retired_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning('tenant_id');
  if (row) await noteReadinessChange(trx, row.tenant_id);
}
