/**
 * How long the example waits for the plan to be sellable unless EXAMPLE_WAIT_MS says otherwise: as
 * long as npm start gives its first sync (five minutes) — seconds to a minute on a quiet machine,
 * several on a busy one; past that npm start has printed that it failed, and why.
 */
export const EXAMPLE_WAIT_DEFAULT_MS = 300_000;

/**
 * Whether the plan can be bought yet: the service answers its checkout link (GET
 * /v1/sdk/checkout, what Subscribe asks). On `npm start`'s first run the demo catalogue is
 * still being synced to the emulators for a little while; the example waits for it (bounded)
 * instead of serving a Subscribe button that answers "checkout unavailable".
 */
export async function waitUntilSellable(
  opts: { backend: string; publishableKey: string; planId: string; timeoutMs: number },
  say: (line: string) => void,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const url = `${opts.backend.replace(/\/+$/, '')}/v1/sdk/checkout?plan_id=${encodeURIComponent(opts.planId)}`;
  const deadline = Date.now() + opts.timeoutMs;
  let told = false;
  for (;;) {
    let reason: string;
    try {
      const res = await fetch(url, {
        headers: { authorization: `Bearer ${opts.publishableKey}` },
        signal: AbortSignal.timeout(10_000),
      });
      if (res.ok) return { ok: true };
      const body = (await res.json().catch(() => ({}))) as { detail?: string };
      // Only "no payment link yet" passes with time; anything else (a bad key…) will not.
      if (res.status !== 404) return { ok: false, reason: `the API answered ${res.status}: ${body.detail ?? ''}` };
      reason = body.detail ?? 'no payment link yet';
    } catch {
      return { ok: false, reason: `cannot reach the API at ${opts.backend}: is \`npm start\` running?` };
    }
    if (Date.now() > deadline) return { ok: false, reason };
    if (!told) {
      say(
        `Waiting for the demo catalogue to reach the emulators (${reason}); \`npm start\` prints a "Demo catalogue" line when it is there…`,
      );
      told = true;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}
