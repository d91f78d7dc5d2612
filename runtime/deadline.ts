/** Waiting with a bound: the two shapes every caller needs, written once. */

/** `p`, or a `TimeoutError` once `ms` pass without an answer (the caller's own bound, whatever the other side does). */
export async function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = () => Object.assign(new Error(`no answer within ${ms} ms`), { name: 'TimeoutError' });
    return await Promise.race([p, new Promise<T>((_, rej) => (timer = setTimeout(() => rej(timeout()), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Run `attempt` until it succeeds, every `intervalMs`; past `timeoutMs` its last error is thrown. */
export async function retryUntil<T>(timeoutMs: number, intervalMs: number, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}
