/** Already the API's form ('2026-11-24T07:00:00.123Z'): a page read with db/timestamps.ts. */
const isIsoUtc = (s: string) =>
  s.length === 24 &&
  s.charCodeAt(10) === 84 /* T */ &&
  s.charCodeAt(23) === 90 /* Z */ &&
  s.charCodeAt(19) === 46; /* . */

/** Time fields as the API writes them. */
export const isoReq = (d: Date | string): string =>
  typeof d === 'string' && isIsoUtc(d) ? d : new Date(d).toISOString();
export const iso = (d: Date | string | null | undefined): string | null => (d ? isoReq(d) : null);
