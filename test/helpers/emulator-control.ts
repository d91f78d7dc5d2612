/**
 * A client for an emulator's /__control API (docs/emulators.md). `strict` turns a non-2xx answer into
 * a thrown error naming the call, for tests where the control call itself must succeed.
 */
export function controlFor(baseUrl: () => string, opts: { strict?: boolean } = {}) {
  return async function control<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${baseUrl()}/__control${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (opts.strict && !res.ok) throw new Error(`${method} /__control${path} → ${res.status} ${JSON.stringify(json)}`);
    return json as T;
  };
}

/** The same, for tests that say `control(path, body)`: GET without a body, POST with one. */
export function getOrPostControlFor(baseUrl: () => string, opts: { strict?: boolean } = {}) {
  const control = controlFor(baseUrl, opts);
  return <T = any>(path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') =>
    control<T>(method, path, body);
}
