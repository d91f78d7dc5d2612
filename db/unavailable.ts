/**
 * Whether an error says Postgres cannot be reached right now (down, restarting, connection cut),
 * as opposed to a bug: the caller answers 503 so clients (and webhook providers) retry, where a
 * bug stays a 500. Codes: SQLSTATE class 08 (connection exception), 57P01–57P03 (admin/crash
 * shutdown, cannot connect now), the socket errors node reports, and knex's pool timeout.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (
    code.startsWith('08') ||
    ['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code)
  )
    return true;
  if (e.name === 'KnexTimeoutError') return true;
  const message = typeof e.message === 'string' ? e.message : '';
  // node-postgres reports a socket closed under it without a code (knex prefixes the SQL).
  return /Connection (terminated|ended) unexpectedly|Client has encountered a connection error|timeout exceeded when trying to connect|the database system is (shutting down|starting up)/i.test(
    message,
  );
}
