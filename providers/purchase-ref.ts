import crypto from 'node:crypto';
import { purchaseTokenAad, type PurchaseRef, type StoreProvider } from '../domain/store-purchase';
import type { Vault } from '../vault/vault';

export type { PurchaseRef, StoreProvider } from '../domain/store-purchase';

export const sha256Hex = (value: string) => crypto.createHash('sha256').update(value).digest('hex');

/** The purchase's key from what the store or the device calls it. */
export const purchaseKey = (provider: StoreProvider, purchaseId: string) =>
  provider === 'store_android' ? sha256Hex(purchaseId) : purchaseId;

/** `store_purchase_tokens.token_hash` for a purchase key (the hash of what the store calls the purchase). */
export const tokenHashOfKey = (provider: StoreProvider, key: string) =>
  provider === 'store_android' ? key : sha256Hex(key);

const aad = purchaseTokenAad;

export function sealPurchase(vault: Vault, tenantId: string, provider: StoreProvider, purchaseId: string): PurchaseRef {
  const key = purchaseKey(provider, purchaseId);
  return provider === 'store_android'
    ? { key, sealed: vault.encrypt(purchaseId, aad(tenantId, provider, key)) }
    : { key };
}

/** What the store calls the purchase, for a call to its server API. A ref sealed for another tenant fails to open. */
export function openPurchase(vault: Vault, tenantId: string, provider: StoreProvider, ref: PurchaseRef): string {
  if (provider !== 'store_android') return ref.key;
  if (!ref.sealed) throw new Error('purchase ref: a Play purchase needs its sealed token');
  const token = vault.decrypt(ref.sealed, aad(tenantId, provider, ref.key));
  if (sha256Hex(token) !== ref.key) throw new Error('purchase ref: the sealed token does not match its key');
  return token;
}
