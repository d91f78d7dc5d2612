import { parse } from 'csv-parse/sync';
import {
  columnsOf,
  MAX_IMPORT_CHARS,
  MAX_IMPORT_LINES,
  REVENUECAT_COLUMNS,
  REVENUECAT_REQUIRED,
  revenueCatRow,
  STORE_FILE_COLUMNS,
  storeRow,
  type FileRow,
} from '../../domain/import-file';
import type { StoreProviderId } from '../../domain/providers';
import { ApiError, invalidRequest } from '../errors';

export interface ParsedFile {
  rows: (FileRow & { line: number })[];
  refused: { line: number; reason: string }[];
}

/** One line's fields; null when it is not valid CSV. Lines are parsed one by one: a bad one spoils only itself. */
function fieldsOf(line: string): string[] | null {
  try {
    const [record] = parse(line, { relax_column_count: true }) as string[][];
    return record ?? [];
  } catch {
    return null;
  }
}

/**
 * An uploaded file: the whole file is refused (before any work) when too large or its header
 * lacks a column; a line that is not valid CSV, or holds a bad value, is refused by its line
 * number (the header is line 1) and the rest go on. The same identifier twice counts once.
 */
export function parseImportFile(csv: string, format: StoreProviderId | 'revenuecat'): ParsedFile {
  if (csv.length > MAX_IMPORT_CHARS)
    throw new ApiError(413, 'import_too_large', `The file is larger than ${MAX_IMPORT_CHARS} characters; split it.`, {
      param: 'csv',
    });
  const lines = csv.replace(/^\uFEFF/, '').split(/\r?\n/);
  while (lines.length && lines[lines.length - 1].trim() === '') lines.pop();
  if (lines.length - 1 > MAX_IMPORT_LINES)
    throw new ApiError(413, 'import_too_large', `The file has more than ${MAX_IMPORT_LINES} lines; split it.`, {
      param: 'csv',
    });
  const header = lines.length ? fieldsOf(lines[0]) : null;
  if (!header) throw invalidRequest('The file is empty or its first line is not CSV.', 'csv');
  const cols = columnsOf(header, format === 'revenuecat' ? REVENUECAT_REQUIRED : STORE_FILE_COLUMNS[format]);
  if (!cols.ok) throw invalidRequest(cols.reason, 'csv');
  const at = { ...cols.at };
  if (format === 'revenuecat') {
    const names = header.map((h) => h.trim().toLowerCase());
    at[REVENUECAT_COLUMNS.lastSeenAlias] = names.indexOf(REVENUECAT_COLUMNS.lastSeenAlias);
  }
  const out: ParsedFile = { rows: [], refused: [] };
  const seen = new Map<string, number>();
  for (let i = 1; i < lines.length; i++) {
    const line = i + 1;
    if (lines[i].trim() === '') continue;
    const fields = fieldsOf(lines[i]);
    if (!fields) {
      out.refused.push({ line, reason: 'The line is not valid CSV.' });
      continue;
    }
    const v = format === 'revenuecat' ? revenueCatRow(fields, at) : storeRow(format, fields, at);
    if (v.ok === false) out.refused.push({ line, reason: v.reason });
    else {
      const key = `${v.row.provider}:${v.row.ref}`;
      if (seen.has(key)) {
        // RevenueCat lists every renewal of a subscription: its first line stands for it.
        if (format !== 'revenuecat') out.refused.push({ line, reason: `The same purchase as line ${seen.get(key)}.` });
        continue;
      }
      seen.set(key, line);
      out.rows.push({ ...v.row, line });
    }
  }
  return out;
}
