/**
 * The one "product synced" rule. At one provider and mode, a product is synced when our record
 * of the object there carries the product's current version (`isSyncedAt`); the product as a
 * whole is synced (on sale everywhere it is) once it has at least one such object and every
 * object it has matches. Drift, readiness and the product answers all judge by these two.
 */
export interface SyncRef {
  synced_version: number;
}

export function isSyncedAt(product: { version: number }, ref: SyncRef | null | undefined): boolean {
  return ref != null && ref.synced_version === product.version;
}

export function isProductSynced(product: { version: number }, refs: readonly SyncRef[]): boolean {
  return refs.length > 0 && refs.every((r) => isSyncedAt(product, r));
}

/** Active products synced at each (provider, mode), counted by `isSyncedAt`: key `<provider>:<mode>`. */
export function syncedCounts(
  rows: readonly { product_id: string; version: number; provider: string; mode: string; synced_version: number }[],
): Map<string, number> {
  const seen = new Map<string, Set<string>>();
  for (const r of rows) {
    if (!isSyncedAt(r, r)) continue;
    const key = `${r.provider}:${r.mode}`;
    if (!seen.has(key)) seen.set(key, new Set());
    seen.get(key)!.add(r.product_id);
  }
  return new Map([...seen].map(([k, s]) => [k, s.size]));
}
