import pg from 'pg';

const TIMESTAMPTZ = 1184;
const defaultTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date | number;

const digit = (s: string, i: number) => {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
};

/**
 * A `timestamptz` as Postgres writes it in text ('2026-11-24 07:00:00.123456+00') → the API's
 * form ('2026-11-24T07:00:00.123Z'), the same string `new Date(…).toISOString()` gives after
 * pg's default parser: fractions are cut to milliseconds, not rounded. The common shape (a
 * session in UTC, a four-digit year) is rewritten in place with no Date and no RegExp; any other
 * shape (another time zone, BC, infinity) goes through the default parser.
 */
export function timestamptzToIso(text: string): string {
  const n = text.length;
  const utc = text.charCodeAt(n - 3) === 43 /* + */ && text.charCodeAt(n - 2) === 48 && text.charCodeAt(n - 1) === 48;
  const shaped =
    text.charCodeAt(4) === 45 &&
    text.charCodeAt(10) === 32 &&
    text.charCodeAt(13) === 58 &&
    digit(text, 0) &&
    digit(text, 18);
  if (utc && shaped) {
    if (n === 22) return `${text.slice(0, 10)}T${text.slice(11, 19)}.000Z`;
    if (n >= 24 && n <= 29 && text.charCodeAt(19) === 46 /* . */)
      return `${text.slice(0, 10)}T${text.slice(11, 19)}.${text.slice(20, Math.min(n - 3, 23)).padEnd(3, '0')}Z`;
  }
  const parsed = defaultTimestamptz(text);
  return parsed instanceof Date && !Number.isNaN(parsed.getTime()) ? parsed.toISOString() : String(text);
}

/**
 * A node-postgres `types` override for one query: timestamptz columns arrive as ISO strings
 * instead of Dates. For a page whose rows go straight to a serializer: it skips building a Date
 * per value only to print it again (two of the hot page's largest costs in bench/RESULTS.md's
 * CPU profile).
 */
export const isoTimestampTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === TIMESTAMPTZ && format !== 'binary') return timestamptzToIso;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};
