import { BillingError } from './errors.js';

/**
 * The one place the SDK talks to the service: `/v1/sdk/*` with the publishable key.
 * Unreachable service (fetch throws, or a 5xx) is `network_unavailable`, which callers
 * turn into "last known value, stale"; a 4xx is the service's Error shape, kept typed.
 */
export class SdkHttp {
  constructor(
    private readonly backend: string,
    private readonly publishableKey: string,
    private readonly fetchImpl: typeof fetch,
  ) {}

  async request<T>(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const url = `${this.backend.replace(/\/+$/, '')}/v1/sdk${path}`;
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers: {
          Authorization: `Bearer ${this.publishableKey}`,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    } catch (cause) {
      throw new BillingError('network_unavailable', `Could not reach ${url}.`, { cause });
    }
    const text = await res.text().catch(() => '');
    let parsed: { error?: unknown; detail?: unknown } | null | undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (res.status >= 500)
      throw new BillingError('network_unavailable', `The service answered ${res.status}.`, {
        status: res.status,
        serviceCode: typeof parsed?.error === 'string' ? parsed.error : undefined,
      });
    if (!res.ok) {
      const serviceCode = typeof parsed?.error === 'string' ? parsed.error : undefined;
      const detail = typeof parsed?.detail === 'string' ? parsed.detail : `HTTP ${res.status}`;
      throw new BillingError('service_error', detail, { status: res.status, serviceCode });
    }
    if (parsed === undefined || parsed === null || typeof parsed !== 'object')
      throw new BillingError('invalid_response', `Expected a JSON object from ${method} ${path}.`, {
        status: res.status,
      });
    return parsed as T;
  }
}
