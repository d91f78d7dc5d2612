/**
 * What a stored webhook payload may not keep: personal data (email, names, addresses,
 * phones), card data and anything secret-looking. Keys are matched at any depth; the value
 * becomes "[redacted]", so the shape an operator debugs with stays.
 */
const PERSONAL =
  /(e-?mail|(^|_)name$|^name$|address|phone|card|^last4$|^exp_(month|year)$|fingerprint|secret|password|token|billing_details|shipping|customer_details|receipt_email|^ip$|ip_address)/i;
const EMAIL_IN_TEXT = /[^\s@]+@[^\s@]+\.[^\s@]+/;

/**
 * Containers nested deeper than this are stored as TRUNCATED. No provider's payload comes near
 * it (theirs are about ten levels deep), but a signed body can nest arbitrarily: the redacted
 * copy is then JSON.stringify'd for Postgres, and V8's stringify recurses (it overflows near
 * 5,000 levels), so the copy must stay shallow for the delivery to be stored and not answer 500.
 */
export const MAX_PAYLOAD_DEPTH = 100;
export const TRUNCATED = '[truncated: nested too deep]';

/** A container of the input and its copy, waiting for its members to be redacted into it. */
interface Pending {
  from: object;
  to: Record<string, unknown> | unknown[];
  depth: number;
}

/**
 * A redacted copy of `value` (the input is not changed). Walked with an explicit stack rather
 * than recursion, so a deeply nested body cannot overflow the call stack.
 */
export function redactPayload(value: unknown): unknown {
  const pending: Pending[] = [];
  // A scalar comes back redacted; a container comes back as an empty copy that is filled
  // when its turn on the stack comes.
  const visit = (v: unknown, depth: number): unknown => {
    if (v && typeof v === 'object') {
      if (depth > MAX_PAYLOAD_DEPTH) return TRUNCATED;
      const to = Array.isArray(v) ? new Array<unknown>(v.length) : {};
      pending.push({ from: v, to, depth });
      return to;
    }
    // Emails hiding in free text (descriptions, metadata values) go too. Most strings of a payload (ids, types,
    // currencies) have no "@": looked for first, the pattern runs on the few that do (it was 3 % of the receiver's
    // thread under a burst, bench/RESULTS.md "What the receive path waits on").
    if (typeof v === 'string' && v.includes('@') && EMAIL_IN_TEXT.test(v)) return '[redacted]';
    return v;
  };
  const root = visit(value, 0);
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { from, to, depth } = next;
    if (Array.isArray(from)) {
      const out = to as unknown[];
      // `in` keeps holes as holes, as Array.prototype.map did.
      for (let i = 0; i < from.length; i++) if (i in from) out[i] = visit(from[i], depth + 1);
    } else {
      const out = to as Record<string, unknown>;
      for (const [k, v] of Object.entries(from))
        out[k] = PERSONAL.test(k) && v !== null ? '[redacted]' : visit(v, depth + 1);
    }
  }
  return root;
}
