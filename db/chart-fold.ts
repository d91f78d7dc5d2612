import type { Knex } from 'knex';
import { ANY, DAY_MEASURES, customerFacts, subscriptionFacts, type CustomerSubscription } from '../domain/charts/facts';
import type { Catalogue, HistoryStep, SubscriptionHistory } from '../domain/charts/history';
import type { SubscriptionStatus } from '../domain/subscription';
import { readCatalogue, readFiledHistories, readHistoriesOf, type FiledHistory } from './charts';
import { CHARGED_SUMMED } from './chart-sums';
import type { TenantReader } from './tenant-read';
import { tenantSettingsSql } from './tenant-tx';

/**
 * The chart sums' fold (migration 047, docs/charts.md "Where the time goes"): run by the worker's
 * fold job (temporal/rollup-folding.ts), never by a read. For one tenant, in one REPEATABLE READ
 * transaction (one snapshot: the pending rows it takes, the histories and the catalogue it reads
 * are of the same moment; a write committed later stays pending for the next pass):
 *
 * - the subscriptions written since the last pass (`chart_pending`) and those whose facts grow
 *   with time (`due`: an open paid stretch's next charge) are counted again: their facts as last
 *   added (recomputed from the history stored with them, at the time they were computed) are
 *   taken out of the sums, their facts now are added; the same for their customers' LTV facts;
 * - a catalogue change (a pending row without a subscription) or a tenant never folded builds
 *   every sum again from every history.
 *
 * The facts come from domain/charts/facts.ts, the functions the charts are defined with, so
 * the sums are the full computation's figures (test/db/chart-sums.test.ts). A subscription's
 * day and retention facts are added once, at full dimension; the other seven ways to filter are
 * derived from those rows in SQL (`apply`): what made a first build of 100,000 subscriptions an
 * hours-long job was writing every fact eight times.
 */

/** The statement's `$n` placeholders as knex's `?`, with the bindings in their order. */
function readerOf(trx: Knex.Transaction): TenantReader {
  return {
    async rows(sql, values) {
      const bindings: unknown[] = [];
      const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
        bindings.push(values[Number(n) - 1]);
        return '?';
      });
      return (await trx.raw(text, bindings as Knex.RawBinding[])).rows;
    },
  };
}

type StoredStep = [number, SubscriptionStatus, string | null];
interface Stored {
  subscription_id: string;
  mode: string;
  provider: string;
  product: string;
  country: string;
  customer: string;
  history: StoredStep[];
  computed_at: number;
}

const stored = (f: FiledHistory, now: number, due: number | null) => ({
  subscription_id: f.history.id,
  mode: f.mode,
  provider: f.provider,
  product: f.product ?? '',
  country: f.country ?? '',
  customer: f.history.customer,
  history: f.history.steps.map((s): StoredStep => [s.at, s.status, s.product_id]),
  computed_at: now,
  due: due === null ? null : new Date(due).toISOString(),
});

const historyOf = (s: Stored): SubscriptionHistory => ({
  id: s.subscription_id,
  customer: s.customer,
  provider: s.provider,
  country: s.country || null,
  steps: s.history.map(([at, status, product_id]): HistoryStep => ({ at, status, product_id })),
});

/**
 * Sums to add, by key: rows of one table, each key once (one upsert statement may touch a row
 * once). Hot: a first build adds millions of facts, so a fact adds only the sums it has.
 */
class Delta {
  readonly rows = new Map<string, { key: readonly string[]; sums: Record<string, number> }>();
  constructor(
    private readonly keys: readonly string[],
    private readonly sums: readonly string[],
  ) {}
  add(key: readonly string[], sums: Readonly<Record<string, number | undefined>>, sign: number) {
    const k = key.join('\n');
    let r = this.rows.get(k);
    if (!r) this.rows.set(k, (r = { key, sums: {} }));
    for (const s in sums) {
      const v = sums[s];
      if (v) r.sums[s] = (r.sums[s] ?? 0) + sign * v;
    }
  }
  /** Rows whose every sum is zero change nothing. */
  changed() {
    const out: Record<string, string | number>[] = [];
    for (const { key, sums } of this.rows.values()) {
      if (!this.sums.some((s) => sums[s])) continue;
      const row: Record<string, string | number> = {};
      this.keys.forEach((c, i) => (row[c] = key[i]));
      for (const s of this.sums) row[s] = sums[s] ?? 0;
      out.push(row);
    }
    return out;
  }
}

const DIMS = ['mode', 'provider_key', 'product', 'country'];
/**
 * The fold adds a subscription's facts once, at full dimension (provider, product and country
 * kept); the rows of the seven other ways to filter are sums of those, derived in SQL
 * (`derived`: the table's pattern rows are one CUBE over the dimensions; day sums also summed
 * over the product charged, CHARGED_SUMMED, what every chart but the product split reads). An LTV fact is not a
 * sum over subscriptions (a customer's cohort is their first payment among the subscriptions a
 * filter keeps), so customerFacts writes its eight ways itself.
 */
const TABLES = {
  chart_day_sums: {
    keys: [...DIMS, 'day', 'currency', 'charged'],
    // One column per day measure: migration 047 spelled the same list (test/db/chart-sums.test.ts compares).
    sums: [...DAY_MEASURES],
    dates: ['day'],
    derived: true,
  },
  chart_retention_sums: {
    keys: [...DIMS, 'cohort', 'month'],
    sums: ['size', 'retained'],
    dates: ['cohort', 'month'],
    derived: true,
  },
  chart_ltv_sums: {
    keys: [...DIMS, 'day', 'currency'],
    sums: ['customers', 'revenue', 'items'],
    dates: ['day'],
    derived: false,
  },
} as const;
type Table = keyof typeof TABLES;

interface Dims {
  mode: string;
  provider: string;
  product: string;
  country: string;
}

class Deltas {
  readonly tables = Object.fromEntries(
    Object.entries(TABLES).map(([t, d]) => [t, new Delta(d.keys, d.sums)]),
  ) as Record<Table, Delta>;

  subscription(dims: Dims, history: SubscriptionHistory, catalogue: Catalogue, now: number, sign: number) {
    const facts = subscriptionFacts(history, catalogue, now);
    // Keys in TABLES' order.
    const { mode, provider, product, country } = dims;
    for (const f of facts.days)
      this.tables.chart_day_sums.add([mode, provider, product, country, f.day, f.currency, f.product], f.m, sign);
    for (const r of facts.retention)
      this.tables.chart_retention_sums.add(
        [mode, provider, product, country, r.cohort, r.month],
        { size: r.size, retained: r.retained },
        sign,
      );
    return facts.due;
  }

  customer(subs: CustomerSubscription[], catalogue: Catalogue, now: number, sign: number) {
    for (const { provider, ...f } of customerFacts(subs, catalogue, now))
      this.tables.chart_ltv_sums.add(
        [f.mode, provider, f.product, f.country, f.day, f.currency],
        { customers: f.customers, revenue: f.revenue, items: f.items },
        sign,
      );
  }
}

/**
 * Which of provider (1), product (2) and country (4) a derived row keeps, and (CHARGED_SUMMED)
 * whether its day sums are summed over the product charged: `grouping(col)` is 1 where left out.
 */
const patternOf = (charged: boolean) => `(case when grouping(provider_key) = 0 then 1 else 0 end
  + case when grouping(product) = 0 then 2 else 0 end
  + case when grouping(country) = 0 then 4 else 0 end
  ${charged ? `+ case when grouping(charged) = 1 then ${CHARGED_SUMMED} else 0 end` : ''})::smallint`;
const keptOr = (col: string) => `case when grouping(${col}) = 1 then '${ANY}' else ${col} end`;

/**
 * Add the changed sums to a table. A derived table's rows go through a temporary table (one
 * statement then touches each key once, however many chunks the rows came in) and are added to
 * every way to filter by one CUBE over provider, product and country (day sums: each also
 * summed over the product charged).
 */
async function apply(trx: Knex.Transaction, table: Table, rows: Record<string, string | number>[]) {
  const { keys, sums, dates, derived } = TABLES[table];
  if (rows.length === 0) return;
  const columns = [...keys.map((k) => `${k} text`), ...sums.map((s) => `${s} bigint`)].join(', ');
  const value = (k: string) => ((dates as readonly string[]).includes(k) ? `x.${k}::date` : `x.${k}`);
  const update = sums.map((s) => `${s} = ${table}.${s} + excluded.${s}`).join(', ');
  if (!derived) {
    for (let i = 0; i < rows.length; i += 5000)
      await trx.raw(
        `insert into ${table} (tenant_id, ${[...keys, ...sums].join(', ')})
         select current_setting('app.tenant_id')::uuid, ${[...keys.map(value), ...sums.map((s) => `x.${s}`)].join(', ')}
           from jsonb_to_recordset(?::jsonb) as x(${columns})
          order by ${keys.map((k) => `x.${k}`).join(', ')}
         on conflict (tenant_id, ${keys.join(', ')}) do update set ${update}`,
        [JSON.stringify(rows.slice(i, i + 5000))],
      );
    return;
  }
  const staged = `${table}_fold`;
  const typed = [
    ...keys.map((k) => `${k} ${(dates as readonly string[]).includes(k) ? 'date' : 'text'}`),
    ...sums.map((s) => `${s} bigint`),
  ].join(', ');
  await trx.raw(`create temporary table ${staged} (${typed}) on commit drop`);
  for (let i = 0; i < rows.length; i += 5000)
    await trx.raw(
      `insert into ${staged} select ${[...keys, ...sums].map(value).join(', ')}
         from jsonb_to_recordset(?::jsonb) as x(${columns})`,
      [JSON.stringify(rows.slice(i, i + 5000))],
    );
  const cubed = ['provider_key', 'product', 'country'];
  // Day sums: each way to filter both per product charged and summed over it.
  const charged = (keys as readonly string[]).includes('charged');
  const rolled = charged ? [...cubed, 'charged'] : cubed;
  const rest = keys.filter((k) => !rolled.includes(k));
  const out = keys.map((k) => (rolled.includes(k) ? keptOr(k) : k));
  // In the key index's order (mode, pattern, then the keys): a first build lays the rows a chart
  // reads (one pattern's) side by side on disk, so its index scan reads a few pages, not a page a row.
  const order = [3, 2, ...keys.slice(1).map((_, i) => i + 4)].join(', ');
  await trx.raw(
    `insert into ${table} (tenant_id, pattern, ${[...keys, ...sums].join(', ')})
     select current_setting('app.tenant_id')::uuid, ${patternOf(charged)}, ${out.join(', ')}, ${sums.map((s) => `sum(${s})`).join(', ')}
       from ${staged}
      group by ${rest.join(', ')}, cube (${cubed.join(', ')})${charged ? ', grouping sets ((charged), ())' : ''}
     having ${sums.map((s) => `sum(${s}) <> 0`).join(' or ')}
      order by ${order}
     on conflict (tenant_id, pattern, ${keys.join(', ')}) do update set ${update}`,
  );
}

async function insertJson(trx: Knex.Transaction, table: string, columns: string, rows: object[]) {
  const names = columns.split(', ').map((c) => c.split(' ')[0]);
  for (let i = 0; i < rows.length; i += 2000) {
    await trx.raw(
      `insert into ${table} (tenant_id, ${names.join(', ')})
       select current_setting('app.tenant_id')::uuid, ${names.map((n) => `x.${n}`).join(', ')}
         from jsonb_to_recordset(?::jsonb) as x(${columns})`,
      [JSON.stringify(rows.slice(i, i + 2000))],
    );
  }
}

const FACT_COLUMNS =
  'subscription_id uuid, mode text, provider text, product text, country text, customer text, history jsonb, computed_at bigint, due timestamptz';

const customerSub = (
  s: { mode: string; provider: string; product: string; country: string },
  h: SubscriptionHistory,
) => ({
  mode: s.mode,
  provider: s.provider,
  product: s.product,
  country: s.country,
  history: h,
});

/**
 * Fold one tenant's chart sums; answers how many subscriptions were counted again, or null when
 * another fold holds the tenant.
 */
export async function foldChartSums(db: Knex, tenantId: string): Promise<number | null> {
  return db.transaction(
    async (trx) => {
      const {
        rows: [lock],
      } = await trx.raw(
        `select pg_try_advisory_xact_lock(hashtext('chart-fold'), hashtext(current_setting('app.tenant_id', true))) as got,
                floor(extract(epoch from now()) * 1000)::float8 as now,
                exists (select 1 from chart_fold_state) as built`,
      );
      if (!lock.got) return null;
      const now = Number(lock.now);
      const reader = readerOf(trx);
      const pending = (await trx.raw('delete from chart_pending returning subscription_id::text as id')).rows as {
        id: string | null;
      }[];
      const catalogue = await readCatalogue(reader);
      const deltas = new Deltas();
      let counted: number;
      const newStored: ReturnType<typeof stored>[] = [];
      const customersNow = new Map<string, CustomerSubscription[]>();
      let goneCustomers: string[] = [];
      let ids: string[] = [];

      if (!lock.built || pending.some((p) => p.id === null)) {
        for (const t of [...Object.keys(TABLES), 'chart_subscription_facts', 'chart_customer_facts'])
          await trx.raw(`delete from ${t}`);
        const all = await readFiledHistories(reader, { mode: null });
        for (const f of all) {
          const s = stored(f, now, null);
          s.due = dueIso(deltas.subscription(s, f.history, catalogue, now, 1));
          newStored.push(s);
          pushCustomer(customersNow, s.customer, customerSub(s, f.history));
        }
        counted = all.length;
      } else {
        const due = (
          await trx.raw(
            'select subscription_id::text as id from chart_subscription_facts where due <= to_timestamp(?::float8 / 1000)',
            [now],
          )
        ).rows as { id: string }[];
        ids = [...new Set([...pending.map((p) => p.id!), ...due.map((d) => d.id)])];
        if (ids.length === 0) {
          await markFolded(trx);
          return 0;
        }
        const old = await readStored(trx, 'subscription_id = any(?::uuid[])', [ids]);
        const fresh = await readHistoriesOf(reader, ids, []);
        for (const o of old) deltas.subscription(o, historyOf(o), catalogue, o.computed_at, -1);
        for (const f of fresh) {
          const s = stored(f, now, null);
          s.due = dueIso(deltas.subscription(s, f.history, catalogue, now, 1));
          newStored.push(s);
        }
        // Their customers, old and new: LTV counts a customer's subscriptions together.
        const customers = [...new Set([...old, ...newStored].map((s) => s.customer))];
        const before = await readStored(trx, 'customer = any(?::text[])', [customers]);
        const computed = new Map(
          (
            (
              await trx.raw('select customer, computed_at from chart_customer_facts where customer = any(?::text[])', [
                customers,
              ])
            ).rows as { customer: string; computed_at: string }[]
          ).map((r) => [r.customer, Number(r.computed_at)]),
        );
        const oldByCustomer = new Map<string, CustomerSubscription[]>();
        for (const s of before) pushCustomer(oldByCustomer, s.customer, customerSub(s, historyOf(s)));
        for (const [c, subs] of oldByCustomer) deltas.customer(subs, catalogue, computed.get(c) ?? now, -1);
        const changed = new Set(ids);
        for (const s of before)
          if (!changed.has(s.subscription_id)) pushCustomer(customersNow, s.customer, customerSub(s, historyOf(s)));
        for (const s of newStored)
          pushCustomer(customersNow, s.customer, customerSub(s, historyOf({ ...s, computed_at: now })));
        goneCustomers = customers.filter((c) => !customersNow.has(c));
        counted = ids.length;
      }
      for (const subs of customersNow.values()) deltas.customer(subs, catalogue, now, 1);
      for (const t of Object.keys(TABLES) as Table[]) await apply(trx, t, deltas.tables[t].changed());

      if (ids.length > 0)
        await trx.raw('delete from chart_subscription_facts where subscription_id = any(?::uuid[])', [ids]);
      await insertJson(
        trx,
        'chart_subscription_facts',
        FACT_COLUMNS,
        newStored.map((s) => ({ ...s, history: s.history })),
      );
      const customers = [...customersNow.keys()];
      if (goneCustomers.length > 0 || customers.length > 0)
        await trx.raw('delete from chart_customer_facts where customer = any(?::text[])', [
          [...goneCustomers, ...customers],
        ]);
      await insertJson(
        trx,
        'chart_customer_facts',
        'customer text, computed_at bigint',
        customers.map((customer) => ({ customer, computed_at: now })),
      );
      await markFolded(trx);
      return counted;
    },
    {
      beginSql: `set transaction isolation level repeatable read; ${tenantSettingsSql(tenantId, 'foldChartSums')}`,
    } as Knex.TransactionConfig,
  );
}

const dueIso = (due: number | null) => (due === null ? null : new Date(due).toISOString());

function pushCustomer(m: Map<string, CustomerSubscription[]>, customer: string, s: CustomerSubscription) {
  const list = m.get(customer) ?? [];
  list.push(s);
  m.set(customer, list);
}

async function readStored(trx: Knex.Transaction, where: string, values: Knex.RawBinding[]): Promise<Stored[]> {
  const rows = (
    await trx.raw(
      `select subscription_id::text, mode, provider, product, country, customer, history, computed_at
         from chart_subscription_facts where ${where}`,
      values,
    )
  ).rows as (Stored & { computed_at: string })[];
  return rows.map((r) => ({ ...r, computed_at: Number(r.computed_at) }));
}

async function markFolded(trx: Knex.Transaction) {
  await trx.raw(`insert into chart_fold_state (tenant_id, folded_at) values (current_setting('app.tenant_id')::uuid, now())
    on conflict (tenant_id) do update set folded_at = excluded.folded_at`);
}

/**
 * The fold job's pass: every tenant with pending writes or due facts, one transaction each.
 * Answers how many tenants were folded.
 */
export async function foldDueChartSums(db: Knex): Promise<number> {
  // Only the ids (migration 047's definer function): the login role reads no tenant's rows.
  const { rows } = (await db.raw('select t as id from chart_folds_due() t')) as { rows: { id: string }[] };
  let folded = 0;
  for (const { id } of rows) if ((await foldChartSums(db, id)) !== null) folded++;
  return folded;
}
