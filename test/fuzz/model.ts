import querystring from 'node:querystring';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * Requests generated from the OpenAPI document, and what the document says each must get.
 * Everything is read from the served document (parameters, their schemas, request bodies,
 * methods per path), so a new operation is fuzzed as soon as it is documented.
 */

export interface DocParam {
  name: string;
  in: 'query' | 'path';
  required: boolean;
  schema: Record<string, any>;
}

export interface DocOp {
  method: string;
  path: string;
  params: DocParam[];
  /** The request body's object schema, when the operation takes one. */
  body?: Record<string, any>;
  responses: number[];
}

export function operationsOf(doc: any): DocOp[] {
  const out: DocOp[] = [];
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      out.push({
        method: method.toUpperCase(),
        path,
        params: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema,
        responses: Object.keys(op.responses).map(Number),
      });
    }
  }
  return out;
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const hasNul = (s: string) => s.includes('\u0000');

/** Is a query-string value (text, already decoded) one the parameter's documented schema accepts? */
export function queryValueOk(p: DocParam, v: string): boolean {
  if (hasNul(v)) return false;
  const s = p.schema;
  if (s.type === 'integer') {
    const t = v.trim();
    if (!/^-?\d+$/.test(t)) return false;
    const n = Number(t);
    // The document says which integers are clamped into range rather than refused.
    if (/clamp/i.test(s.description ?? '')) return true;
    return n >= (s.minimum ?? -Infinity) && n <= (s.maximum ?? Infinity);
  }
  if (Array.isArray(s.enum)) return s.enum.includes(v);
  if (s.pattern && !new RegExp(s.pattern).test(v)) return false;
  if (s.format === 'uuid' && !UUID_RE.test(v)) return false;
  return v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity);
}

const ajv = new Ajv2020({ strict: false });
const bodyValidators = new Map<object, ReturnType<typeof ajv.compile>>();
/** Is a JSON body value one the documented property schema accepts? */
export function bodyValueOk(schema: object, v: unknown): boolean {
  let validate = bodyValidators.get(schema);
  if (!validate) bodyValidators.set(schema, (validate = ajv.compile(schema)));
  return validate(v) as boolean;
}

// ── Generators ────────────────────────────────────────────────────────────────────────────

/** Percent-encode every byte of the UTF-8 form that is not unreserved (lone surrogates become U+FFFD). */
export const enc = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

const HOSTILE_TEXT = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0000'.repeat(3),
  '1e3',
  '1E+308',
  '1.5',
  '-1',
  '-0',
  '+5',
  '0x10',
  '0b1',
  '1_000',
  'NaN',
  'Infinity',
  '-Infinity',
  '9'.repeat(40),
  '9223372036854775808',
  '9007199254740993',
  '2147483648',
  '4294967296',
  '1e400',
  ' 7 ',
  '\u00a07',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  "' or 1=1 --",
  '%',
  '\\',
  '"',
  '<script>',
  '../../etc/passwd',
  'x'.repeat(201),
  'x'.repeat(4096),
  'é',
  'e\u0301',
  '👩‍👩‍👧',
  '\u202e',
  '\ufeff',
  '\ud800',
  '𝟙𝟚𝟛',
  '١٢٣',
  'ＡＢＣ',
];
/** Already-encoded text the encoder would never produce: broken escapes, overlong NUL, stray bytes, `+`. */
const HOSTILE_RAW = [
  '%',
  '%Z',
  '%ZZ',
  '%E0%A4%A',
  '%00',
  '%C0%80',
  '%FF%FE',
  '%ED%A0%80',
  '+',
  'a+b',
  '%2B',
  '%26',
  '%3D',
  'a%20',
];

const textValue = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_TEXT).map(enc) },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_RAW) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map(enc) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map(enc) },
  { weight: 1, arbitrary: fc.double().map((n) => enc(String(n))) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n) => String(n)) },
);

/** A value for one documented query parameter: mostly what it should take, often what it should not. */
function queryValue(p: DocParam): fc.Arbitrary<string> {
  const s = p.schema;
  let good: fc.Arbitrary<string>;
  if (s.type === 'integer') {
    const lo = s.minimum ?? 0;
    const hi = Math.min(s.maximum ?? 1000, 1000);
    good = fc
      .oneof(fc.integer({ min: lo, max: hi }), fc.constantFrom(lo, s.maximum ?? hi, lo - 1, (s.maximum ?? hi) + 1))
      .map(String);
  } else if (Array.isArray(s.enum)) {
    good = fc.constantFrom(...(s.enum as string[])).map(enc);
  } else if (s.format === 'uuid') {
    good = fc.uuid().map(enc);
  } else {
    good = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map(enc);
  }
  return fc.oneof({ weight: 2, arbitrary: good }, { weight: 2, arbitrary: textValue });
}

/** Names no operation documents: plain unknowns, names refused anywhere, prototype keys, encodings. */
const strangeName = fc.constantFrom(
  'foo',
  'LIMIT',
  'limit[]',
  'a.b',
  '',
  'tenant_id',
  'tenant',
  'Tenant-Id',
  'api_key',
  'client_secret',
  'credentials',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'x%00',
  '%00',
  '%ZZ',
  enc('ключ'),
  enc('🔑'),
);

export type QueryPart = [name: string, value: string];

/** Raw query pieces: documented parameters (sometimes twice), sometimes a strange name too. */
export function queryParts(op: DocOp): fc.Arbitrary<QueryPart[]> {
  const documented = op.params.filter((p) => p.in === 'query');
  const pieces = documented.map((p) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant([] as QueryPart[]) },
      { weight: 4, arbitrary: queryValue(p).map((v) => [[p.name, v]] as QueryPart[]) },
      {
        weight: 1,
        arbitrary: fc.tuple(queryValue(p), queryValue(p)).map(
          ([a, b]) =>
            [
              [p.name, a],
              [p.name, b],
            ] as QueryPart[],
        ),
      },
      { weight: 1, arbitrary: fc.constant([[p.name, '']] as QueryPart[]) },
    ),
  );
  const extra = fc.oneof(
    { weight: 6, arbitrary: fc.constant([] as QueryPart[]) },
    { weight: 1, arbitrary: fc.tuple(strangeName, textValue).map(([n, v]) => [[n, v]] as QueryPart[]) },
  );
  return fc.tuple(fc.tuple(...pieces), extra).map(([ps, e]) => [...ps.flat(), ...e]);
}

export type PathId = { kind: 'own' | 'own-upper' | 'other-tenant' | 'random-uuid' } | { kind: 'text'; raw: string };

export const pathId: fc.Arbitrary<PathId> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom<PathId>(
      { kind: 'own' },
      { kind: 'own-upper' },
      { kind: 'other-tenant' },
      { kind: 'random-uuid' },
    ),
  },
  { weight: 2, arbitrary: textValue.filter((r) => r.length > 0).map((raw) => ({ kind: 'text' as const, raw })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('%2F', 'a%2Fb', '..', '%2E%2E', '00000000-0000-0000-0000-000000000000', '1', '-1', 'null')
      .map((raw) => ({ kind: 'text' as const, raw })),
  },
);

export type Body =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; bytes: Buffer; note: string }
  | { kind: 'deep'; depth: number; where: 'known' | 'unknown' }
  | { kind: 'size'; bytes: number; chunked: boolean; valid: boolean };

const MB = 1024 * 1024;

const jsonScalar = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e308, -0, '', '0', 'x', '\u0000', [], {}, [0], { a: 1 }),
  fc.integer({ min: -5, max: 50 }),
  fc.double(),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

/** Bodies for an operation: documented fields with right and wrong values, strange keys, broken JSON, size and depth attacks. */
export function bodyFor(op: DocOp): fc.Arbitrary<Body> {
  const props = Object.keys(op.body?.properties ?? {});
  const field = props.length
    ? fc.record(Object.fromEntries(props.map((n) => [n, fc.oneof(fc.integer({ min: 0, max: 5 }), jsonScalar)])), {
        requiredKeys: [],
      })
    : fc.constant({});
  const strange = fc.dictionary(
    fc.constantFrom('foo', 'tenant_id', 'api_key', 'webhook_secret', 'a\u0000', '__proto__', 'nested'),
    jsonScalar,
    { maxKeys: 2 },
  );
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant<Body>({ kind: 'none' }) },
    { weight: 4, arbitrary: field.map((value) => ({ kind: 'json' as const, value })) },
    {
      weight: 2,
      arbitrary: fc.tuple(field, strange).map(([a, b]) => ({ kind: 'json' as const, value: { ...a, ...b } })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom<unknown>([], [{}], 'x', 1, null, true)
        .map((value) => ({ kind: 'json' as const, value })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          ['{', 'truncated'],
          ['{"a":1,}', 'trailing comma'],
          ["{'a':1}", 'single quotes'],
          ['\ufeff{}', 'BOM'],
          ['NaN', 'NaN'],
          ['{"a":1}{"b":2}', 'two documents'],
        )
        .map(([text, note]): Body => ({ kind: 'raw', bytes: Buffer.from(text, 'utf8'), note })),
    },
    {
      weight: 1,
      arbitrary: fc.constant<Body>({
        kind: 'raw',
        bytes: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
        note: 'invalid UTF-8',
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .record({
          depth: fc.constantFrom(64, 1000, 10_000, 100_000),
          where: fc.constantFrom<'known' | 'unknown'>('known', 'unknown'),
        })
        .map((d) => ({ kind: 'deep' as const, ...d })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Body>(
        { kind: 'size', bytes: MB, chunked: false, valid: true },
        { kind: 'size', bytes: MB + 1, chunked: false, valid: true },
        { kind: 'size', bytes: MB + 1, chunked: true, valid: true },
        { kind: 'size', bytes: 20 * MB, chunked: false, valid: true },
        { kind: 'size', bytes: 20 * MB, chunked: true, valid: false },
      ),
    },
  );
}

/** A JSON object of exactly `bytes` bytes (whitespace padding), or filler that is not JSON. */
export function sizedBody(b: Extract<Body, { kind: 'size' }>): Buffer {
  if (!b.valid) return Buffer.alloc(b.bytes, 0x61);
  const core = '{}';
  return Buffer.from(core[0] + ' '.repeat(b.bytes - core.length) + core[1], 'utf8');
}

export function deepBody(b: Extract<Body, { kind: 'deep' }>, knownField?: string): Buffer {
  const key = b.where === 'known' && knownField ? knownField : 'nested';
  return Buffer.from(`{"${key}":${'['.repeat(b.depth)}${']'.repeat(b.depth)}}`, 'utf8');
}

export type Auth =
  | 'valid'
  | 'valid-lowercase'
  | 'none'
  | 'basic'
  | 'bearer-empty'
  | 'publishable'
  | 'unknown-sk'
  | 'duplicate'
  | 'trailing-junk';
export const auth = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Auth>('valid') },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Auth>(
      'valid-lowercase',
      'none',
      'basic',
      'bearer-empty',
      'publishable',
      'unknown-sk',
      'duplicate',
      'trailing-junk',
    ),
  },
);

export interface Extras {
  tenantHeader?: string;
  prefer?: string;
  contentType?: string;
  bigHeader?: boolean;
}
export const extras: fc.Arbitrary<Extras> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('x-tenant-id', 'tenant', 'X-Tenant').map((tenantHeader) => ({ tenantHeader })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('respond-async', 'respond-async, wait=1', 'handling=strict', '\u00ff')
      .map((prefer) => ({ prefer })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json; charset=latin1',
        'multipart/form-data; boundary=x',
      )
      .map((contentType) => ({ contentType })),
  },
  { weight: 1, arbitrary: fc.constant({ bigHeader: true }) },
);

/** What Koa hands the route: the query as Node's querystring decodes it. */
export function decodeQuery(parts: QueryPart[]): Record<string, string | string[]> {
  return querystring.parse(parts.map(([n, v]) => `${n}=${v}`).join('&')) as Record<string, string | string[]>;
}
