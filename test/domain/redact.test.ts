import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_DEPTH, redactPayload, TRUNCATED } from '../../domain/redact';

// The recursive implementation this replaced, kept as the reference for ordinary payloads.
const PERSONAL =
  /(e-?mail|(^|_)name$|^name$|address|phone|card|^last4$|^exp_(month|year)$|fingerprint|secret|password|token|billing_details|shipping|customer_details|receipt_email|^ip$|ip_address)/i;
function recursiveRedact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(recursiveRedact);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = PERSONAL.test(k) && v !== null ? '[redacted]' : recursiveRedact(v);
    return out;
  }
  if (typeof value === 'string' && /[^\s@]+@[^\s@]+\.[^\s@]+/.test(value)) return '[redacted]';
  return value;
}

/** `levels` containers, alternating arrays and objects, built without recursion. */
function nested(levels: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { d: v };
  return v;
}

function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v && typeof v === 'object') {
      max = Math.max(max, d + 1);
      for (const c of Object.values(v)) stack.push([c, d + 1]);
    }
  }
  return max;
}

describe('redactPayload', () => {
  it('redacts personal keys at any depth, inside arrays too, and keeps the rest', () => {
    const payload = {
      id: 'evt_1',
      amount: 999,
      email: 'a@example.com',
      data: {
        object: {
          customer_details: { email: 'b@example.com', name: 'B' },
          billing_details: { address: { line1: 'x' } },
          items: [
            { price: { nickname: 'Pro', metadata: { first_name: 'Ann', sku: 'pro' } } },
            { card: { last4: '4242', brand: 'visa' } },
          ],
          payment_method: {
            exp_month: 12,
            exp_year: 2030,
            fingerprint: 'fp',
            ip: '10.0.0.1',
            client_secret: 'pi_secret',
          },
          phone: '+1',
          receipt_email: 'c@example.com',
          username: 'ann42',
        },
      },
    };
    expect(redactPayload(payload)).toEqual({
      id: 'evt_1',
      amount: 999,
      email: '[redacted]',
      data: {
        object: {
          customer_details: '[redacted]',
          billing_details: '[redacted]',
          items: [
            { price: { nickname: 'Pro', metadata: { first_name: '[redacted]', sku: 'pro' } } },
            { card: '[redacted]' },
          ],
          payment_method: {
            exp_month: '[redacted]',
            exp_year: '[redacted]',
            fingerprint: '[redacted]',
            ip: '[redacted]',
            client_secret: '[redacted]',
          },
          phone: '[redacted]',
          receipt_email: '[redacted]',
          username: 'ann42',
        },
      },
    });
    // A copy: the input is untouched.
    expect(payload.email).toBe('a@example.com');
  });

  it('redacts emails in free text wherever they are, and only those strings', () => {
    expect(
      redactPayload({
        description: 'Refund for bob@example.com, ticket 7',
        notes: ['ok', 'mail me: x.y@host.io'],
        handle: '@bob',
        tag: 'a@b',
      }),
    ).toEqual({
      description: '[redacted]',
      notes: ['ok', '[redacted]'],
      handle: '@bob',
      tag: 'a@b',
    });
    expect(redactPayload('someone@example.org')).toBe('[redacted]');
  });

  it('keeps nulls (a personal key that is null stays null) and scalars as they are', () => {
    expect(
      redactPayload({ email: null, name: null, shipping: null, n: 0, f: false, s: '', list: [null, 1, 'x'] }),
    ).toEqual({
      email: null,
      name: null,
      shipping: null,
      n: 0,
      f: false,
      s: '',
      list: [null, 1, 'x'],
    });
    expect(redactPayload(null)).toBeNull();
    expect(redactPayload(42)).toBe(42);
    expect(redactPayload([])).toEqual([]);
  });

  it('gives what the recursive version gave for ordinary payloads', () => {
    const key = fc.constantFrom(
      'id',
      'email',
      'e-mail',
      'name',
      'first_name',
      'nickname',
      'address',
      'card',
      'last4',
      'exp_month',
      'token',
      'ip',
      'metadata',
      'data',
      'amount',
      'description',
    );
    const scalar = fc.oneof(
      fc.constant(null),
      fc.integer(),
      fc.boolean(),
      fc.string({ maxLength: 8 }),
      fc.emailAddress(),
      fc.constantFrom('see x@y.io', 'no email'),
    );
    const { json } = fc.letrec((tie) => ({
      json: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        scalar,
        fc.array(tie('json'), { maxLength: 4 }),
        fc.dictionary(key, tie('json'), { maxKeys: 5 }),
      ),
    }));
    fc.assert(
      fc.property(json, (v) => {
        expect(redactPayload(v)).toEqual(recursiveRedact(v));
      }),
      { numRuns: 500 },
    );
  });

  it('cuts only containers nested deeper than MAX_PAYLOAD_DEPTH', () => {
    const leaf = { email: 'deep@example.com', ok: 1 };
    expect(redactPayload(nested(MAX_PAYLOAD_DEPTH, leaf))).toEqual(recursiveRedact(nested(MAX_PAYLOAD_DEPTH, leaf)));
    expect(redactPayload(nested(MAX_PAYLOAD_DEPTH + 1, leaf))).toEqual(nested(MAX_PAYLOAD_DEPTH + 1, TRUNCATED));
  });

  // The JSON text of `levels` containers around `leaf`, as a signed body would carry it.
  const text = (levels: number, open: (i: number) => string, close: (i: number) => string, leaf: string) => {
    const parts: string[] = [];
    for (let i = 0; i < levels; i++) parts.push(open(i));
    parts.push(leaf);
    for (let i = levels - 1; i >= 0; i--) parts.push(close(i));
    return parts.join('');
  };
  it.each([
    ['arrays', () => '[', () => ']'],
    ['objects', () => '{"a":', () => '}'],
    ['arrays and objects', (i: number) => (i % 2 ? '[' : '{"d":'), (i: number) => (i % 2 ? ']' : '}')],
  ])('returns for 200,000 levels of %s, with a copy shallow enough to store', (_, open, close) => {
    const deep = text(200_000, open, close, '{"email":"bottom@example.com"}');
    const body = JSON.parse(`{"event":"payment.captured","email":"top@example.com","payload":${deep}}`);
    const out = redactPayload(body) as Record<string, unknown>;
    expect(out.event).toBe('payment.captured');
    expect(out.email).toBe('[redacted]');
    expect(depthOf(out)).toBeLessThanOrEqual(MAX_PAYLOAD_DEPTH + 1);
    // What the receiver does with it next (V8's JSON.stringify recurses).
    const stored = JSON.stringify(out);
    expect(stored).toContain(TRUNCATED);
    expect(stored).not.toContain('bottom@example.com');
  });
});
