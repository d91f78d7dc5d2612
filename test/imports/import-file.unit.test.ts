import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { parseImportFile } from '../../activities/import-file';
import { importFileBounds, MAX_IMPORT_LINE_COMMAS } from '../../domain/import-file';

/**
 * An uploaded file's lines, parsed once by one streaming parser in the import's activity (issue
 * 42, item 1), give what parsing each line on its own gave: a line that is not CSV is refused by
 * itself (an open quote never swallows the lines after it), the rest are read.
 */
describe('parseImportFile', () => {
  const lines = [
    'purchase_token,app_user_id',
    'tok_a,user_a',
    '"broken,user_x',
    'tok_b,user_b',
    '"a"x"y",user_y',
    'e""f,user_z',
    '"tok ""c""",user_c',
    '',
    '"tok_d","user_d"',
    ',nobody',
    'tok_a,user_again',
  ];

  it('reads every line as parsing it alone did', async () => {
    const file = await parseImportFile(lines.join('\r\n'), 'store_android');
    // Each line parsed on its own, as before: which lines are CSV at all.
    const alone = lines.map((l) => {
      try {
        return parse(l, { relax_column_count: true })[0] ?? null;
      } catch {
        return undefined;
      }
    });
    const notCsv = alone.flatMap((f, i) => (f === undefined ? [i + 1] : []));
    expect(notCsv).toEqual([3, 5, 6]);
    expect(file.refused).toEqual(
      [
        ...notCsv.map((line) => ({ line, reason: 'The line is not valid CSV.' })),
        { line: 10, reason: 'purchase_token is empty.' },
        { line: 11, reason: 'The same purchase as line 2.' },
      ].sort((x, y) => x.line - y.line),
    );
    expect(file.rows).toEqual([
      { provider: 'store_android', ref: 'tok_a', app_user_id: 'user_a', line: 2 },
      { provider: 'store_android', ref: 'tok_b', app_user_id: 'user_b', line: 4 },
      { provider: 'store_android', ref: 'tok "c"', app_user_id: 'user_c', line: 7 },
      { provider: 'store_android', ref: 'tok_d', app_user_id: 'user_d', line: 9 },
    ]);
  });

  it('the largest file the bounds accept (10,000 lines of 98 commas) is read whole, every line refused by itself', async () => {
    const csv = ['original_transaction_id,app_user_id', ...Array.from({ length: 10_000 }, () => ','.repeat(98))].join(
      '\n',
    );
    expect(importFileBounds(csv).ok).toBe(true);
    expect(importFileBounds(csv + '\n' + ','.repeat(MAX_IMPORT_LINE_COMMAS + 1)).ok).toBe(false);
    const file = await parseImportFile(csv, 'store_ios');
    expect(file.rows).toEqual([]);
    expect(file.refused).toHaveLength(10_000);
    expect(new Set(file.refused.map((r) => r.reason))).toEqual(new Set(['original_transaction_id is empty.']));
    // About a second of CPU on an idle core (the parser's cost is per field); a loaded machine takes several.
  }, 60_000);
});
