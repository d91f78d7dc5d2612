import fc from 'fast-check';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { isoTimestampTypes, timestamptzToIso } from '../../db/timestamps';

const viaDate = (text: string) => (pg.types.getTypeParser(1184, 'text')(text) as Date).toISOString();

/** How Postgres writes a timestamptz in a UTC session: trailing zeros of the fraction dropped, no fraction when it is zero. */
function postgresText(ms: number, micros: number): string {
  const d = new Date(ms);
  const fraction = String(d.getUTCMilliseconds() * 1000 + micros)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
}

describe('timestamptz text → the API ISO form', () => {
  it('equals pg’s own Date parse printed with toISOString, for any UTC instant between years 1000 and 9999', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }),
        fc.integer({ min: 0, max: 999 }),
        (ms, micros) => {
          const text = postgresText(ms, micros);
          expect(timestamptzToIso(text)).toBe(viaDate(text));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('takes the default parser for any other shape: another zone, BC', () => {
    for (const text of [
      '2026-11-24 12:30:00.5+05:30',
      '2026-11-24 02:00:00-05',
      '2026-11-24 07:00:00.000001-03:30',
      '0044-03-15 12:00:00+00 BC',
    ])
      expect(timestamptzToIso(text)).toBe(viaDate(text));
  });

  const client = new pg.Client({ connectionString: inject('appDatabaseUrl') });
  afterAll(async () => client.end());

  it('real Postgres output, in a UTC session and in a session in another zone, reads the same as through Dates', async () => {
    await client.connect();
    const sql = `select t from (values ('2026-11-24 07:00:00+00'::timestamptz), ('2026-11-24 07:00:00.1+00'), ('2026-11-24 07:00:00.123456+00'), ('2026-11-24 07:00:00.999999+00'), ('2026-02-28 23:59:59.0005+00'), ('1999-12-31 23:59:59.12+00')) v(t)`;
    for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns']) {
      await client.query(`set timezone = '${zone}'`);
      const asDates = (await client.query(sql)).rows.map((r) => (r.t as Date).toISOString());
      const asIso = (await client.query({ text: sql, types: isoTimestampTypes })).rows.map((r) => r.t);
      expect(asIso).toEqual(asDates);
      expect(asIso[2]).toBe('2026-11-24T07:00:00.123Z');
    }
  });
});
