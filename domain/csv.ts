/**
 * One CSV line (RFC 4180) whose cells are safe to open in a spreadsheet: a cell that begins like
 * a formula (`=`, `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`, so the program
 * shows it as text rather than running it (OWASP, "CSV Injection"); a cell holding a separator,
 * a quote or a line break is quoted.
 */
export function csvLine(cells: readonly (string | number | null)[]): string {
  return cells.map(csvCell).join(',') + '\r\n';
}

function csvCell(v: string | number | null): string {
  if (v === null) return '';
  let s = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
