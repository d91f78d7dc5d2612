import { parse } from 'csv-parse';
import {
  columnsOf,
  importFileBounds,
  quotesUnpaired,
  REVENUECAT_COLUMNS,
  REVENUECAT_REQUIRED,
  revenueCatRow,
  STORE_FILE_COLUMNS,
  storeRow,
  type FileRow,
} from '../domain/import-file';
import type { StoreProviderId } from '../domain/providers';

export interface ParsedFile {
  rows: (FileRow & { line: number })[];
  refused: { line: number; reason: string }[];
}

/**
 * Lines handed to the parser at a time: what it parses between two turns of the event loop. The
 * parser's cost is per field (about 1 µs each on an idle core, several under load): 64 lines of
 * the most fields a line may have are a few milliseconds, so the worker's other activities and
 * heartbeats go on while a file of 10,000 such lines (about a second of CPU) is read.
 */
const LINES_PER_CHUNK = 64;

/**
 * The file's lines by line number, parsed once by one streaming parser; a line that is not CSV
 * has none. The lines are written to it a chunk at a time with a turn of the event loop between
 * chunks (`setImmediate`): a stream read with `for await` runs on microtasks and next-ticks, which
 * never yield to the event loop, so a whole file parsed that way held the process as one piece.
 * `tick` runs after each chunk (the activity's heartbeat).
 */
async function fieldsByLine(lines: string[], tick: () => void): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  const parser = parse({ relax_column_count: true, skip_records_with_error: true, info: true });
  parser.on('readable', () => {
    for (let r = parser.read(); r !== null; r = parser.read()) {
      const { record, info } = r as { record: string[]; info: { lines: number } };
      if (!quotesUnpaired(lines[info.lines - 1] ?? '')) out.set(info.lines, record);
    }
  });
  const ended = new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
  });
  for (let i = 0; i < lines.length; i += LINES_PER_CHUNK) {
    // Each line is a record: one whose quotes do not pair is left out, so it cannot run on into the next.
    const chunk = lines.slice(i, i + LINES_PER_CHUNK).map((l) => (quotesUnpaired(l) ? '' : l));
    parser.write(chunk.join('\n') + (i + LINES_PER_CHUNK < lines.length ? '\n' : ''));
    tick();
    await new Promise<void>((r) => setImmediate(r));
  }
  parser.end();
  await ended;
  return out;
}

/**
 * An uploaded file's lines (its bounds and header were checked when it was received): a line
 * that is not valid CSV, or holds a bad value, is refused by its line number (the header is line
 * 1) and the rest go on. The same identifier twice counts once.
 */
export async function parseImportFile(
  csv: string,
  format: StoreProviderId | 'revenuecat',
  tick: () => void = () => {},
): Promise<ParsedFile> {
  const bounds = importFileBounds(csv);
  if (bounds.ok === false) throw new Error(`an import file past its bounds: ${bounds.reason}`);
  const { lines } = bounds;
  const fields = await fieldsByLine(lines, tick);
  const header = fields.get(1);
  const cols = header
    ? columnsOf(header, format === 'revenuecat' ? REVENUECAT_REQUIRED : STORE_FILE_COLUMNS[format])
    : null;
  if (!header || !cols || cols.ok === false) throw new Error('an import file without its header');
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
    const f = fields.get(line);
    if (!f) {
      out.refused.push({ line, reason: 'The line is not valid CSV.' });
      continue;
    }
    const v = format === 'revenuecat' ? revenueCatRow(f, at) : storeRow(format, f, at);
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
