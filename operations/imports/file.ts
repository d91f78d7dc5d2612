import { parse } from 'csv-parse/sync';
import {
  columnsOf,
  importFileBounds,
  MAX_IMPORT_LINE_CHARS,
  REVENUECAT_REQUIRED,
  STORE_FILE_COLUMNS,
} from '../../domain/import-file';
import type { StoreProviderId } from '../../domain/providers';
import { ApiError, invalidRequest } from '../errors';

/*
 * What the request checks of an uploaded file before it is stored: its first line's columns
 * (that line alone, bounded), then, once the connection is known to be proven, every bound of
 * the whole file (characters, lines, a line's length and fields: domain/import-file.ts) in one
 * pass with no parsing. Its data lines are read later, once, by the import's activity
 * (activities/import-file.ts), never on the api's thread.
 */

const tooLarge = (detail: string) => new ApiError(413, 'import_too_large', detail, { param: 'csv' });

/** The first line names the columns the format needs. */
export function checkImportHeader(csv: string, format: StoreProviderId | 'revenuecat'): void {
  const text = csv.replace(/^\uFEFF/, '');
  const end = text.search(/\r?\n/);
  const first = end === -1 ? text : text.slice(0, end);
  if (first.length > MAX_IMPORT_LINE_CHARS)
    throw tooLarge(`Line 1 is longer than ${MAX_IMPORT_LINE_CHARS} characters.`);
  const header = first.trim() ? headerOf(first) : null;
  if (!header) throw invalidRequest('The file is empty or its first line is not CSV.', 'csv');
  const cols = columnsOf(header, format === 'revenuecat' ? REVENUECAT_REQUIRED : STORE_FILE_COLUMNS[format]);
  if (cols.ok === false) throw invalidRequest(cols.reason, 'csv');
}

/** The whole file within every bound (413 `import_too_large` naming the one it passes). */
export function checkImportBounds(csv: string): void {
  const bounds = importFileBounds(csv);
  if (bounds.ok === false) throw tooLarge(bounds.reason);
}

function headerOf(line: string): string[] | null {
  try {
    const [record] = parse(line, { relax_column_count: true }) as string[][];
    return record ?? null;
  } catch {
    return null;
  }
}
