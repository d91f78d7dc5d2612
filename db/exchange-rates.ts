import type { Rate, RateBook } from '../domain/charts/rates';
import type { TenantReader } from './tenant-read';
import type { Tx } from './transaction';

/** One stored rate (docs/charts.md, "Currencies"). */
export interface RateRow extends Rate {
  updated_at: string;
}

const COLUMNS = `from_currency as "from", to_currency as "to", rate::float8 as rate, valid_from::text as valid_from,
  to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as updated_at`;

/** The tenant's rates into one currency: what a chart converted into it needs. */
export async function readRates(reader: TenantReader, to: string): Promise<RateBook> {
  const rows = await reader.rows(`select ${COLUMNS} from exchange_rates where to_currency = $1`, [to]);
  return rows.map((r) => ({
    from: String(r.from),
    to: String(r.to),
    rate: Number(r.rate),
    valid_from: String(r.valid_from),
  }));
}

/** Every rate of the tenant, optionally of one pair's side, by pair and date. */
export async function listRates(reader: TenantReader, filter: { from?: string; to?: string }): Promise<RateRow[]> {
  const values: unknown[] = [];
  const where = ['true'];
  if (filter.from) where.push(`from_currency = $${values.push(filter.from)}`);
  if (filter.to) where.push(`to_currency = $${values.push(filter.to)}`);
  const rows = await reader.rows(
    `select ${COLUMNS} from exchange_rates where ${where.join(' and ')}
      order by from_currency, to_currency, valid_from limit 10000`,
    values,
  );
  return rows.map((r) => ({ ...(r as unknown as RateRow), rate: Number(r.rate) }));
}

/** Set rates: a pair's rate from a day replaces the one stored for the same pair and day. */
export async function upsertRates(trx: Tx, tenantId: string, rates: readonly Rate[]): Promise<RateRow[]> {
  const { rows } = await trx.raw(
    `insert into exchange_rates (tenant_id, from_currency, to_currency, valid_from, rate)
     select ?::uuid, x.from_currency, x.to_currency, x.valid_from::date, x.rate
       from jsonb_to_recordset(?::jsonb) as x(from_currency text, to_currency text, valid_from text, rate numeric)
     on conflict (tenant_id, from_currency, to_currency, valid_from) do update set rate = excluded.rate, updated_at = now()
     returning ${COLUMNS}`,
    [
      tenantId,
      JSON.stringify(
        rates.map((r) => ({ from_currency: r.from, to_currency: r.to, valid_from: r.valid_from, rate: r.rate })),
      ),
    ],
  );
  return (rows as RateRow[]).map((r) => ({ ...r, rate: Number(r.rate) }));
}

/** Remove one rate; answers whether it existed. */
export async function deleteRate(trx: Tx, from: string, to: string, validFrom: string): Promise<boolean> {
  const n = await trx('exchange_rates').where({ from_currency: from, to_currency: to, valid_from: validFrom }).delete();
  return n > 0;
}
