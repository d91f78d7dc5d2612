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
