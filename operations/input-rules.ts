import { ApiError, invalidRequest } from './errors';

const FORBIDDEN = /(secret|api_key|credential)/i;

/** Deeper than any input an operation takes; the walks below refuse past it. */
export const MAX_INPUT_DEPTH = 32;

/** The top-level field a path like `a.b[2].c` lies under: what `param` names. */
const topField = (path: string) => /^[^.[]*/.exec(path)![0];

/**
 * Visit every key and value of an input without recursion: a 1 MiB body can nest 100 000
 * levels deep, which would overflow the stack of a recursive walk (a 500). Past
 * MAX_INPUT_DEPTH the input is refused by name instead, before anything else reads it.
 */
function walk(
  root: unknown,
  onKey: (key: string, path: string) => void,
  onValue: (value: unknown, path: string) => void,
): void {
  const stack: [unknown, string, number][] = [[root, '', 0]];
  while (stack.length) {
    const [value, path, depth] = stack.pop()!;
    onValue(value, path);
    if (!value || typeof value !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH)
      throw invalidRequest(
        `${topField(path) || 'input'} nests deeper than ${MAX_INPUT_DEPTH} levels`,
        topField(path) || undefined,
      );
    const children: [string, unknown][] = Array.isArray(value)
      ? value.map((c, i) => [`${path}[${i}]`, c])
      : Object.entries(value).map(([k, c]) => {
          const here = path ? `${path}.${k}` : k;
          onKey(k, here);
          return [here, c];
        });
    // Pushed in reverse so the walk visits fields in their order.
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i][1], children[i][0], depth + 1]);
  }
}

/**
 * Provider secrets never travel through the API: any key, at any depth, whose name contains
 * `secret`, `api_key` or `credential` is refused before anything is read or written.
 */
export function assertNoForbiddenFields(value: unknown): void {
  walk(
    value,
    (k, here) => {
      if (FORBIDDEN.test(k)) {
        throw new ApiError(
          400,
          'forbidden_field',
          `"${here}" is not accepted: provider secrets, API keys and credentials are entered only in the dashboard.`,
        );
      }
    },
    () => {},
  );
}

/** The tenant comes from the key only; naming one anywhere is refused. */
export function assertNoTenantInInput(input: Record<string, unknown>): void {
  for (const k of Object.keys(input)) {
    if (k.toLowerCase().replace(/-/g, '_') === 'tenant_id' || k.toLowerCase() === 'tenant') {
      throw invalidRequest(`"${k}" is not accepted: the tenant is derived from the API key`, k);
    }
  }
}

export function assertNoTenantHeader(headers: Record<string, unknown>): void {
  for (const h of Object.keys(headers)) {
    if (/tenant/i.test(h))
      throw invalidRequest(`header "${h}" is not accepted: the tenant is derived from the API key`);
  }
}

/**
 * PostgreSQL text cannot hold a NUL byte, so a string carrying one could only fail deep in
 * the database as a 500. Refused up front, naming where it is, on every surface.
 */
export function assertNoNulBytes(value: unknown): void {
  walk(
    value,
    (k) => {
      if (k.includes('\u0000'))
        throw new ApiError(400, 'invalid_request', 'a parameter name must not contain a NUL byte');
    },
    (v, path) => {
      if (typeof v === 'string' && v.includes('\u0000'))
        throw invalidRequest(`${path || 'input'} must not contain a NUL byte`, path || undefined);
    },
  );
}
