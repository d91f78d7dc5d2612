import { ID_LIMITS } from './events';
import type { StoreProviderId } from './providers';

/**
 * The rules of an uploaded import file (docs/reconciliation.md, "Importing from the stores"):
 * which columns each format needs, what a row must hold, and the size limits. Parsing a line's
 * CSV is the caller's; what it yields is judged here.
 */

/** At most this many data lines per file; a larger file is refused before any work starts. */
export const MAX_IMPORT_LINES = 10_000;
/** At most this many characters of CSV (the API's 1 MiB body is the outer bound). */
export const MAX_IMPORT_CHARS = 1_000_000;
/** At most this many characters on one line: a Play token (4,096) and an app user id with room to spare. */
export const MAX_IMPORT_LINE_CHARS = 8_192;
/**
 * At most this many commas on one line (fields - 1), counted before any parsing, quoted ones
 * included: a store file needs two columns and RevenueCat's transactions export has about forty.
 */
export const MAX_IMPORT_LINE_COMMAS = 99;

export type FileBounds = { ok: true; lines: string[] } | { ok: false; reason: string };

/**
 * The file's lines (a BOM, a trailing newline and trailing blank lines dropped) when it is within
 * every bound, checked in one pass before any line is parsed; otherwise which bound it passes.
 */
export function importFileBounds(csv: string): FileBounds {
  if (csv.length > MAX_IMPORT_CHARS)
    return { ok: false, reason: `The file is larger than ${MAX_IMPORT_CHARS} characters; split it.` };
  const lines = csv.replace(/^\uFEFF/, '').split(/\r?\n/);
  while (lines.length && lines[lines.length - 1].trim() === '') lines.pop();
  if (lines.length - 1 > MAX_IMPORT_LINES)
    return { ok: false, reason: `The file has more than ${MAX_IMPORT_LINES} lines; split it.` };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.length > MAX_IMPORT_LINE_CHARS)
      return { ok: false, reason: `Line ${i + 1} is longer than ${MAX_IMPORT_LINE_CHARS} characters.` };
    let commas = 0;
    for (let at = line.indexOf(','); at !== -1; at = line.indexOf(',', at + 1))
      if (++commas > MAX_IMPORT_LINE_COMMAS)
        return { ok: false, reason: `Line ${i + 1} has more than ${MAX_IMPORT_LINE_COMMAS + 1} fields.` };
  }
  return { ok: true, lines };
}

/**
 * A line whose quotes do not pair up cannot be CSV on its own (a file's records are its lines):
 * it is refused by itself before parsing, so an open quote never swallows the lines after it.
 */
export function quotesUnpaired(line: string): boolean {
  let quotes = 0;
  for (let at = line.indexOf('"'); at !== -1; at = line.indexOf('"', at + 1)) quotes++;
  return quotes % 2 === 1;
}
const MAX_APP_USER_ID = 200;

/** The header each store file starts with (any column order; other columns are ignored). */
export const STORE_FILE_COLUMNS: Record<StoreProviderId, readonly [string, string]> = {
  store_android: ['purchase_token', 'app_user_id'],
  store_ios: ['original_transaction_id', 'app_user_id'],
};

/**
 * RevenueCat's transactions export (their scheduled data export, "Transactions" feed): the
 * columns read. `store` is app_store, play_store, stripe or promotional;
 * `original_store_transaction_id` is the App Store original transaction id (for Play, the first
 * order id); the app user is the last seen alias, else the original app user id.
 */
export const REVENUECAT_COLUMNS = {
  originalAppUserId: 'rc_original_app_user_id',
  lastSeenAlias: 'rc_last_seen_app_user_id_alias',
  store: 'store',
  originalTransaction: 'original_store_transaction_id',
} as const;
/** The RevenueCat columns a file must have (the alias is read when present). */
export const REVENUECAT_REQUIRED = [
  REVENUECAT_COLUMNS.originalAppUserId,
  REVENUECAT_COLUMNS.store,
  REVENUECAT_COLUMNS.originalTransaction,
] as const;

/** One identifier to look up at a store, for one app user. */
export interface FileRow {
  provider: StoreProviderId;
  /** Play purchase token or App Store original transaction id. */
  ref: string;
  app_user_id: string;
}

export type RowVerdict = { ok: true; row: FileRow } | { ok: false; reason: string };

/** Column positions of a header, or the reason the header is refused. */
export function columnsOf(
  header: string[],
  wanted: readonly string[],
): { ok: true; at: Record<string, number> } | { ok: false; reason: string } {
  const names = header.map((h) => h.trim().toLowerCase());
  const missing = wanted.filter((w) => !names.includes(w));
  if (missing.length)
    return {
      ok: false,
      reason: `The first line must name the columns ${wanted.join(', ')}; missing: ${missing.join(', ')}.`,
    };
  return { ok: true, at: Object.fromEntries(wanted.map((w) => [w, names.indexOf(w)])) };
}

function appUserProblem(id: string): string | null {
  if (!id) return 'app_user_id is empty.';
  if (id.length > MAX_APP_USER_ID) return `app_user_id is longer than ${MAX_APP_USER_ID} characters.`;
  return null;
}

/** A store file's data line. */
export function storeRow(provider: StoreProviderId, fields: string[], at: Record<string, number>): RowVerdict {
  const [refCol, userCol] = STORE_FILE_COLUMNS[provider];
  const ref = (fields[at[refCol]] ?? '').trim();
  const user = (fields[at[userCol]] ?? '').trim();
  if (!ref) return { ok: false, reason: `${refCol} is empty.` };
  const max = provider === 'store_android' ? ID_LIMITS.purchase_token : 64;
  if (ref.length > max) return { ok: false, reason: `${refCol} is longer than ${max} characters.` };
  if (provider === 'store_ios' && !/^[0-9A-Za-z_-]+$/.test(ref))
    return { ok: false, reason: `${refCol} is not an App Store transaction id.` };
  const problem = appUserProblem(user);
  if (problem) return { ok: false, reason: problem };
  return { ok: true, row: { provider, ref, app_user_id: user } };
}

/** A RevenueCat export line: App Store rows are looked up; others are refused with the way to bring them in. */
export function revenueCatRow(fields: string[], at: Record<string, number>): RowVerdict {
  const c = REVENUECAT_COLUMNS;
  const store = (fields[at[c.store]] ?? '').trim();
  const alias = (fields[at[c.lastSeenAlias]] ?? '').trim();
  const user = alias || (fields[at[c.originalAppUserId]] ?? '').trim();
  const original = (fields[at[c.originalTransaction]] ?? '').trim();
  switch (store) {
    case 'app_store': {
      const v = storeRow('store_ios', [original, user], { original_transaction_id: 0, app_user_id: 1 });
      return v.ok === false
        ? { ok: false, reason: v.reason.replace('original_transaction_id', c.originalTransaction) }
        : v;
    }
    case 'play_store':
      return {
        ok: false,
        reason:
          'RevenueCat exports name a Play order id, not the purchase token Play looks subscriptions up by: import Play subscriptions with a purchase_token file.',
      };
    case 'stripe':
      return {
        ok: false,
        reason: 'Stripe subscriptions come from the psp_a import (POST /v1/imports {"provider": "psp_a"}).',
      };
    case 'promotional':
      return { ok: false, reason: 'A RevenueCat promotional grant is no store purchase: there is nothing to look up.' };
    default:
      return { ok: false, reason: store ? `Unknown store "${store.slice(0, 40)}".` : 'store is empty.' };
  }
}

/** What binds an uploaded file's sealed text to its import (the vault's AAD): a copy in another row fails to open. */
export const importFileAad = (tenantId: string, importId: string) => `${tenantId}:${importId}:imports.file_sealed`;
