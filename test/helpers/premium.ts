/**
 * Premium as the workflow confirmed it: a paid (or granted) entitlement grants access and no
 * provisional access is left (docs/provisional-access.md). Tests that go on to read what the
 * workflow wrote wait for this, not for the first `is_premium: true`, which provisional access
 * answers at the webhook's receipt.
 */
export function confirmedPremium(body: {
  is_premium?: boolean;
  entitlements?: { source?: string; is_active?: boolean }[];
}): boolean {
  const ents = body.entitlements ?? [];
  return (
    body.is_premium === true &&
    ents.some((e) => e.source !== 'provisional' && e.is_active) &&
    !ents.some((e) => e.source === 'provisional')
  );
}
