import { ApiError, invalidRequest } from './errors';

const FORBIDDEN = /(secret|api_key|credential)/i;

/**
 * Provider secrets never travel through the API: any key, at any depth, whose name contains
 * `secret`, `api_key` or `credential` is refused before anything is read or written.
 */
export function assertNoForbiddenFields(value: unknown, path = ''): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => assertNoForbiddenFields(v, `${path}[${i}]`));
    return;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const here = path ? `${path}.${k}` : k;
      if (FORBIDDEN.test(k)) {
        throw new ApiError(400, 'forbidden_field', `"${here}" is not accepted: provider secrets, API keys and credentials are entered only in the dashboard.`);
      }
      assertNoForbiddenFields(v, here);
    }
  }
}

/** The tenant comes from the key only; naming one anywhere is refused. */
export function assertNoTenantInInput(input: Record<string, unknown>): void {
  for (const k of Object.keys(input)) {
    if (k.toLowerCase().replace(/-/g, '_') === 'tenant_id' || k.toLowerCase() === 'tenant') {
      throw invalidRequest(`"${k}" is not accepted: the tenant is derived from the API key`);
    }
  }
}

export function assertNoTenantHeader(headers: Record<string, unknown>): void {
  for (const h of Object.keys(headers)) {
    if (/tenant/i.test(h)) throw invalidRequest(`header "${h}" is not accepted: the tenant is derived from the API key`);
  }
}

/**
 * PostgreSQL text cannot hold a NUL byte, so a string carrying one could only fail deep in
 * the database as a 500. Refused up front, naming where it is, on every surface.
 */
export function assertNoNulBytes(value: unknown, path = ''): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw invalidRequest(`${path || 'input'} must not contain a NUL byte`, path || undefined);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => assertNoNulBytes(v, `${path}[${i}]`));
    return;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const here = path ? `${path}.${k}` : k;
      if (k.includes('\u0000')) throw new ApiError(400, 'invalid_request', 'a parameter name must not contain a NUL byte');
      assertNoNulBytes(v, here);
    }
  }
}
