import type { WebhookStack } from './webhook-stack';

/** The psp_a emulator's checkout control (docs/emulators.md): one purchase, its signed events sent to `target`. */
export function emulatorCheckout(
  stack: Pick<WebhookStack, 'emulators' | 'account'> & { webhookUrl?: string },
  user: string,
  opts: { email?: string; target?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${stack.emulators.psp_a.url}/__control/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      sku: 'pro',
      email: opts.email ?? `${user}@example.com`,
      target: opts.target ?? stack.webhookUrl,
      account: stack.account,
      mode: 'test',
      app_user_id: user,
    }),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

/**
 * Keeps the SDK endpoint's per-tenant bucket full (120 burst, 1/s): the bench's poller is its
 * instrument, not an app. Answers the stop.
 */
export function keepSdkBucketsFull(stack: Pick<WebhookStack, 'db'>): () => void {
  const refill = setInterval(
    () =>
      void stack
        .db('rate_limit_buckets')
        .update({ tokens: 120, refreshed_at: stack.db.fn.now() })
        .catch(() => {}),
    1000,
  );
  return () => clearInterval(refill);
}

/** Checkouts at `rate` for `seconds`; answers each purchase's due → premium latency (ms). */
export async function checkouts(stack: WebhookStack, rate: number, tag: string, seconds: number): Promise<number[]> {
  const total = Math.round(rate * seconds);
  const t0 = Date.now();
  const dueOf = new Map<string, number>();
  const premium = new Map<string, number>();
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const pending = [...dueOf.keys()].filter((u) => !premium.has(u));
      if (pending.length) {
        const rows: { app_user_id: string }[] = await stack
          .db('entitlements')
          .whereIn('app_user_id', pending)
          .where({ state: 'active' })
          .select('app_user_id');
        const now = Date.now();
        for (const r of rows) premium.set(r.app_user_id, now);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const runs: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const user = `${tag}_${i}`;
    const due = t0 + (i * 1000) / rate;
    dueOf.set(user, due);
    runs.push(
      (async () => {
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        await emulatorCheckout(stack, user).then((r) => r.text());
      })(),
    );
  }
  await Promise.all(runs);
  const deadline = Date.now() + 120_000;
  while (premium.size < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  watching = false;
  await watcher;
  return [...premium.entries()].map(([u, at]) => at - dueOf.get(u)!).sort((a, b) => a - b);
}
