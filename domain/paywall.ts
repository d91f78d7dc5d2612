/** A paywall is published when its last publication is not older than its last edit. */
export function isPaywallPublished(p: { published_at: Date | string | null; updated_at: Date | string }): boolean {
  return p.published_at !== null && new Date(p.published_at).getTime() >= new Date(p.updated_at).getTime();
}
