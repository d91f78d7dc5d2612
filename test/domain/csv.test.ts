import { describe, expect, it } from 'vitest';
import { csvLine } from '../../domain/csv';

describe('csvLine', () => {
  it('neutralises a cell that a spreadsheet would run as a formula', () => {
    expect(csvLine(['=HYPERLINK("http://x")', '+1', '-1', '@SUM(A1)', '\tx', 'plain', -3, null])).toBe(
      `"'=HYPERLINK(""http://x"")",'+1,'-1,'@SUM(A1),'\tx,plain,-3,\r\n`,
    );
  });

  it('quotes separators, quotes and line breaks (RFC 4180)', () => {
    expect(csvLine(['a,b', 'say "hi"', 'two\nlines'])).toBe('"a,b","say ""hi""","two\nlines"\r\n');
  });
});
