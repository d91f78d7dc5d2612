/**
 * Ids the service mints are uuids. Inputs are checked with this before they reach SQL, so a
 * malformed id gets the same "not found" as a missing one instead of a database cast error.
 */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}
