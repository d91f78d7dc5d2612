import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TOOL_LIST } from '../../api/tools/tool-list';
import { withTenant } from '../../db/tenant-tx';
import { testDb } from '../helpers/db';
import { newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';

/**
 * The same fuzzing for the tool server, through the official MCP client: every tool, with
 * arguments that are plausible (the tool's own argument names) or hostile (NUL, unicode,
 * huge and fractional numbers, deep nesting, wrong types, unknown names). For every call:
 *   - it answers: a tool result, never a transport failure or an internal JSON-RPC error;
 *   - a refusal is an `isError` result whose text starts with a REST error code that is a
 *     client's fault (never `server_misconfigured` or a 5xx code);
 *   - a refusal writes nothing but, for a write tool, its one audit row;
 *   - a success carries `structuredContent` (the client itself checks it against the tool's
 *     outputSchema).
 * FUZZ_TOOL_RUNS bounds it (default 600); the seed is printed, and FUZZ_SEED replays a run.
 */

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : crypto.randomInt(2 ** 31);
const RUNS = Number(process.env.FUZZ_TOOL_RUNS ?? 600);
const SERVER_FAULTS = new Set(['server_misconfigured', 'internal_error', 'drift_incomplete']);
const TOOLS = TOOL_LIST.map((t) => ({ name: t.name, write: t.operation.write }));

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    '\u0000',
    'a\u0000b',
    '%00',
    '../../etc',
    '😀'.repeat(50),
    'x'.repeat(70_000),
    'premium_monthly',
    'PREMIUM',
    ' US ',
    'null',
    '__proto__',
  ),
  fc.uuid(),
);
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 2 ** 31, 2 ** 53, 2 ** 63, 1e308, -1e308, 0.5, 1e-9),
);
const leaf = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null));
const value = fc.oneof(
  { weight: 6, arbitrary: leaf },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, leaf, { maxKeys: 3 }) },
);
const deep = fc.integer({ min: 20, max: 400 }).map((n) => {
  let v: unknown = 'x';
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
});

describe('fuzzing the tool server (MCP) from its own tool list', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let client: Client;
  let properties: Map<string, string[]>;
  let countSql = '';

  beforeAll(async () => {
    worker = await startTestWorker();
    api = await startApi({ config: { ...worker.config } });
    tenant = await newTenant('tools-fuzz');
    // A product with a price, and no provider connection: provider-bound tools meet no network.
    await withTenant(testDb(), tenant.tenant_id, async (trx) => {
      const [p] = await trx('products')
        .insert({ tenant_id: tenant.tenant_id, sku: 'premium_monthly', name: 'Premium', tier: 'monthly' })
        .returning('id');
      await trx('prices').insert({
        tenant_id: tenant.tenant_id,
        product_id: p.id,
        country: 'US',
        currency: 'USD',
        amount_minor: 999,
      });
    });
    client = new Client({ name: 'fuzz', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.toolsUrl}/`), {
        requestInit: { headers: { authorization: `Bearer ${tenant.secret_key}` } },
      }),
    );
    const { tools } = await client.listTools();
    properties = new Map(tools.map((t) => [t.name, Object.keys(t.inputSchema.properties ?? {})]));
    const { rows } = await testDb().raw(
      `select table_name from information_schema.columns where table_schema = 'public' and column_name = 'tenant_id' and table_name <> 'rate_limit_buckets' and table_name not like 'chart\\_%' order by table_name`,
    );
    countSql = `select ${(rows as { table_name: string }[]).map((r) => `(select count(*)::int from "${r.table_name}" where tenant_id = :t) as "${r.table_name}"`).join(', ')}`;
  });
  afterAll(async () => {
    await client?.close();
    await api?.close();
    await worker?.stop();
  });

  const counts = async (): Promise<Record<string, number>> =>
    (await testDb().raw(countSql, { t: tenant.tenant_id })).rows[0];
  const fillBucket = () =>
    testDb().raw(
      `insert into rate_limit_buckets (tenant_id, tokens, refreshed_at) values (?, 120, clock_timestamp()) on conflict (tenant_id) do update set tokens = 120, refreshed_at = clock_timestamp()`,
      [tenant.tenant_id],
    );

  it(`every call answers; refusals are client-fault codes and write nothing (seed ${SEED})`, async () => {
    console.log(`tool fuzz seed ${SEED} (${RUNS} runs): replay with FUZZ_SEED=${SEED}`);
    const call = fc.constantFrom(...TOOLS).chain((tool) => {
      const names = properties.get(tool.name) ?? [];
      const plausible = names.length
        ? fc.dictionary(fc.constantFrom(...names), value, { maxKeys: names.length })
        : fc.constant({});
      const hostile = fc.oneof(
        fc.dictionary(hostileString, value, { maxKeys: 4 }),
        fc.record({ k: fc.constantFrom(...(names.length ? names : ['x'])), v: deep }).map(({ k, v }) => ({ [k]: v })),
      );
      return fc.record({
        tool: fc.constant(tool),
        args: fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 1, arbitrary: hostile }),
      });
    });
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(call, async ({ tool, args }) => {
        await fillBucket();
        const before = await counts();
        const what = `${tool.name}(${JSON.stringify(args).slice(0, 400)})`;
        const r = (await client.callTool({ name: tool.name, arguments: args as Record<string, unknown> })) as {
          isError?: boolean;
          content: { text?: string }[];
          structuredContent?: unknown;
        };
        const text = r.content.map((c) => c.text ?? '').join('');
        if (!r.isError) {
          seen.set('ok', (seen.get('ok') ?? 0) + 1);
          expect(r.structuredContent, what).toBeTypeOf('object');
          return;
        }
        const code = /^([a-z_]+): /.exec(text)?.[1];
        seen.set(code ?? 'uncoded', (seen.get(code ?? 'uncoded') ?? 0) + 1);
        expect(code, `refusal without a leading error code: ${what} → ${text.slice(0, 300)}`).toBeDefined();
        expect(SERVER_FAULTS.has(code!), `server fault for client input: ${what} → ${text.slice(0, 300)}`).toBe(false);
        const { audit_entries: auditBefore, ...restBefore } = before;
        const { audit_entries: auditAfter, ...restAfter } = await counts();
        expect(restAfter, `rows written by a refused call: ${what} → ${text.slice(0, 200)}`).toEqual(restBefore);
        expect(auditAfter - auditBefore, `audit rows: ${what}`).toBeLessThanOrEqual(tool.write ? 1 : 0);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: false },
    );
    console.log('tool fuzz outcomes:', Object.fromEntries([...seen.entries()].sort()));
    expect(seen.get('ok') ?? 0).toBeGreaterThan(RUNS / 20); // the run reached the tools, not only refusals
    expect(seen.get('invalid_request') ?? 0).toBeGreaterThan(RUNS / 20);
  }, 600_000);
});
