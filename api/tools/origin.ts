import { ApiError } from '../../operations/errors';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * DNS-rebinding guard for the tool server. A page on evil.example whose name resolves to
 * 127.0.0.1 can make a browser POST here; browsers always send `Origin` on such requests, and
 * MCP clients (which are not browsers) send none. So: no Origin passes, a loopback Origin
 * passes, a configured one passes, and anything else is refused before the key or the body is
 * read. The bearer key is the real protection; this keeps a browser from even probing.
 */
export function checkOrigin(origin: string | undefined, allowed: readonly string[]): void {
  if (origin === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  if (
    url &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    (LOOPBACK.has(url.hostname) || allowed.includes(url.origin))
  )
    return;
  throw new ApiError(
    403,
    'forbidden_origin',
    `Requests from the browser origin ${JSON.stringify(origin).slice(0, 200)} are not accepted by the tool server; add it to TOOLS_ALLOWED_ORIGINS if it is yours.`,
  );
}
