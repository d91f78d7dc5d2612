/** Poll a condition with a deadline: the way tests wait (never a sleep standing in for the condition). */
export async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  // Quick at first, then easing off to 500 ms: a long wait must not turn into a request flood that
  // the endpoint's own client limits answer with 429 (which the condition then never sees pass).
  for (let pause = 50; ; pause = Math.min(500, Math.round(pause * 1.5))) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, pause));
  }
}
