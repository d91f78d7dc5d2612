import http from 'node:http';
import autocannon from 'autocannon';

/** What a load phase sends: request i's path and headers (rotating across tenants). */
export type RequestMaker = (i: number) => { path: string; headers: Record<string, string> };

export interface LoadResult {
  /** Completed responses per second over the phase. */
  rps: number;
  completed: number;
  /** Requests put on the wire (completed + abandoned in flight at the end), for per-request CPU. */
  sent: number;
  durationS: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Responses other than 2xx, by status. */
  non2xx: number;
  statuses: Record<string, number>;
  errors: number;
  /** Requests abandoned at the cut-off (paced phases only). */
  unfinished?: number;
  /** Every latency sample, sorted (ms). */
  samples: Float64Array;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

class Recorder {
  private lat = new Float64Array(1 << 16);
  private n = 0;
  statuses: Record<string, number> = {};
  errors = 0;

  record(ms: number, status: number) {
    if (this.n === this.lat.length) {
      const bigger = new Float64Array(this.lat.length * 2);
      bigger.set(this.lat);
      this.lat = bigger;
    }
    this.lat[this.n++] = ms;
    this.statuses[status] = (this.statuses[status] ?? 0) + 1;
  }

  result(durationS: number): LoadResult {
    const sorted = this.lat.slice(0, this.n).sort();
    let non2xx = 0;
    for (const [s, c] of Object.entries(this.statuses)) if (!s.startsWith('2')) non2xx += c;
    return {
      rps: this.n / durationS,
      completed: this.n,
      sent: this.n,
      durationS,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.length ? sorted[sorted.length - 1] : NaN,
      non2xx,
      statuses: this.statuses,
      errors: this.errors,
      samples: sorted,
    };
  }
}

/** Several measurements of the same thing pooled: percentiles over all samples, rate over all time. */
export function pool(results: LoadResult[]): LoadResult {
  const n = results.reduce((k, r) => k + r.samples.length, 0);
  const all = new Float64Array(n);
  let at = 0;
  for (const r of results) {
    all.set(r.samples, at);
    at += r.samples.length;
  }
  all.sort();
  const statuses: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  const completed = results.reduce((k, r) => k + r.completed, 0);
  const sent = results.reduce((k, r) => k + r.sent, 0);
  const durationS = results.reduce((k, r) => k + r.completed / r.rps, 0);
  return {
    rps: completed / durationS,
    completed,
    sent,
    durationS,
    p50: percentile(all, 50),
    p90: percentile(all, 90),
    p99: percentile(all, 99),
    max: n ? all[n - 1] : NaN,
    non2xx: results.reduce((k, r) => k + r.non2xx, 0),
    statuses,
    errors: results.reduce((k, r) => k + r.errors, 0),
    unfinished: results.reduce((k, r) => k + (r.unfinished ?? 0), 0),
    samples: all,
  };
}

/**
 * Closed-loop load with autocannon: `connections` keep-alive connections, each sending its
 * next request as soon as the previous answer arrives (saturation), or capped by
 * `overallRate`. Latencies are recorded per response with sub-millisecond precision (autocannon's
 * own histogram rounds to whole ms). A global counter rotates the requests across tenants.
 *
 * Caveat on `overallRate`: autocannon does not pace. Each connection may send rate/connections
 * requests per second, and sends them back to back as soon as each one-second window opens, then
 * waits. The offered load is therefore a burst at the start of every second, not a steady stream,
 * and latency is measured from the actual send (coordinated omission: a stalled server delays
 * the next sends instead of counting their wait). autocannon's own correction assumes an interval
 * of ceil(1/rate) = 1 ms and would fabricate samples, so it is turned off here.
 */
export function runAutocannon(opts: {
  url: string;
  make: RequestMaker;
  connections: number;
  durationS: number;
  overallRate?: number;
}): Promise<LoadResult> {
  let i = 0;
  const rec = new Recorder();
  return new Promise((resolve, reject) => {
    const inst = autocannon(
      {
        url: opts.url,
        connections: opts.connections,
        pipelining: 1,
        duration: opts.durationS,
        timeout: 10,
        overallRate: opts.overallRate,
        ignoreCoordinatedOmission: opts.overallRate ? true : undefined,
        requests: [
          {
            method: 'GET',
            setupRequest: (req) => {
              const r = opts.make(i++);
              return { ...req, path: r.path, headers: r.headers };
            },
          },
        ],
      },
      (err, res) => {
        if (err) return reject(err);
        rec.errors = res.errors;
        const out = rec.result(res.duration);
        out.sent = Math.max(out.completed, res.requests.sent ?? out.completed);
        resolve(out);
      },
    );
    inst.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => rec.record(ms, status));
  });
}

/**
 * Open-loop load at a fixed rate: request k is due at start + k/rate and is sent then (or as soon
 * as the timer catches up), whatever happened to earlier requests; keep-alive sockets, up to
 * `maxSockets` in flight (beyond that requests wait in the client, and that wait counts).
 * Latency is measured from the moment the request was *due*, so time spent behind a slow server
 * counts (no coordinated omission). Requests still unanswered `graceS` after the last one was due
 * are abandoned, counted as `unfinished`, and enter the percentiles with the time they had waited
 * so far (a lower bound) — an overloaded server shows up as huge percentiles, not as a long run.
 */
export async function runPaced(opts: {
  url: string;
  make: RequestMaker;
  rate: number;
  durationS: number;
  graceS?: number;
  maxSockets?: number;
}): Promise<LoadResult & { serviceP50: number; serviceP99: number }> {
  const u = new URL(opts.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 128, scheduling: 'fifo' });
  const rec = new Recorder();
  const svc = new Recorder();
  const total = Math.round(opts.rate * opts.durationS);
  const interval = 1000 / opts.rate;
  const finished = new Uint8Array(total);
  const inFlight = new Map<number, http.ClientRequest>();
  let sent = 0;
  let done = 0;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let cutoff: NodeJS.Timeout | undefined;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const finish = (k: number) => {
      finished[k] = 1;
      inFlight.delete(k);
      if (++done === total) resolve();
    };
    const fire = (k: number, due: number) => {
      const r = opts.make(k);
      const t = performance.now();
      const req = http.request(
        { agent, host: u.hostname, port: u.port, method: 'GET', path: r.path, headers: r.headers },
        (res) => {
          res.on('data', () => {});
          res.on('end', () => {
            if (closed) return;
            const end = performance.now();
            rec.record(end - due, res.statusCode ?? 0);
            svc.record(end - t, res.statusCode ?? 0);
            finish(k);
          });
        },
      );
      req.on('error', () => {
        if (closed) return;
        rec.errors++;
        finish(k);
      });
      inFlight.set(k, req);
      req.end();
    };
    const tick = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - start) * opts.rate) / 1000) + 1);
      while (sent < due) {
        fire(sent, start + sent * interval);
        sent++;
      }
      if (sent < total) timer = setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    };
    tick();
    cutoff = setTimeout(resolve, (opts.durationS + (opts.graceS ?? 2)) * 1000);
  });
  closed = true;
  clearTimeout(timer);
  clearTimeout(cutoff);
  const end = performance.now();
  let unfinished = 0;
  for (let k = 0; k < total; k++) {
    if (finished[k]) continue;
    unfinished++;
    rec.record(end - (start + k * interval), 0);
  }
  // Abort what is left, including requests still queued in the agent for a socket: otherwise they
  // would go on being sent after the phase and load the server during the next one.
  for (const req of inFlight.values()) req.destroy();
  agent.destroy();
  const r = rec.result(opts.durationS);
  const s = svc.result(opts.durationS);
  r.completed -= unfinished;
  // Abandoned requests may or may not have reached the server: count them as sent (an upper bound).
  r.sent = r.completed + unfinished + rec.errors;
  r.non2xx -= unfinished;
  if (unfinished) r.statuses['0'] -= unfinished;
  if (r.statuses['0'] === 0) delete r.statuses['0'];
  // Throughput: answered requests over the time from the first send to the last answer (or the cut-off).
  r.rps = r.completed / ((end - start) / 1000);
  return { ...r, serviceP50: s.p50, serviceP99: s.p99, unfinished };
}
