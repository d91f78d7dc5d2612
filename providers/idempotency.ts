import crypto from 'node:crypto';

/**
 * The idempotency key of one provider write: the same (tenant, object, version, step) always
 * gives the same key, so a retried activity replays the same request and the provider
 * answers with the object it already made. A new version of the object gets a new key.
 * Hashed: providers cap key length and nothing about the tenant should show in their logs.
 */
export function idempotencyKey(parts: {
  tenantId: string;
  provider: string;
  object: string;
  objectId: string;
  version: number;
  step: string;
}): string {
  const material = [
    parts.tenantId,
    parts.provider,
    parts.object,
    parts.objectId,
    String(parts.version),
    parts.step,
  ].join('|');
  return `bill_${crypto.createHash('sha256').update(material).digest('base64url').slice(0, 40)}`;
}
