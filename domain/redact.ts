/**
 * What a stored webhook payload may not keep: personal data (email, names, addresses,
 * phones), card data and anything secret-looking. Keys are matched at any depth; the value
 * becomes "[redacted]", so the shape an operator debugs with stays.
 */
const PERSONAL = /(e-?mail|(^|_)name$|^name$|address|phone|card|^last4$|^exp_(month|year)$|fingerprint|secret|password|token|billing_details|shipping|customer_details|receipt_email|^ip$|ip_address)/i;

export function redactPayload(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactPayload);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = PERSONAL.test(k) && v !== null ? '[redacted]' : redactPayload(v);
    return out;
  }
  // Emails hiding in free text (descriptions, metadata values) go too.
  if (typeof value === 'string' && /[^\s@]+@[^\s@]+\.[^\s@]+/.test(value)) return '[redacted]';
  return value;
}
