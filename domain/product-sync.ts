/** The "product synced" rule: a product is on sale only once every provider object it has matches its current version. */
export interface SyncRef {
  synced_version: number;
}

export function isProductSynced(product: { version: number }, refs: readonly SyncRef[]): boolean {
  return refs.length > 0 && refs.every((r) => r.synced_version === product.version);
}
