import type { Knex } from 'knex';
import { subjectOf } from '../domain/drift';
import type { SyncOutcome } from '../domain/sync-plan';
import { readReadinessFacts } from '../db/readiness-facts';
import { syncRunState } from '../db/demo-facts';
import { withTenant } from '../db/tenant-tx';

/** The provider and mode the example web app sells through (a test publishable key, psp_a's hosted checkout). */
const SELLING = { provider: 'psp_a', mode: 'test' } as const;

/**
 * Whether the demo can sell through the example: at least one product synced to psp_a in test
 * mode, judged by the one "product synced" rule (domain/product-sync.ts, via the readiness facts).
 */
export async function demoCanSell(db: Knex, tenantId: string): Promise<boolean> {
  const facts = await withTenant(db, tenantId, (trx) => readReadinessFacts(trx));
  return (facts.find((f) => f.provider === SELLING.provider)?.synced_test ?? 0) > 0;
}

export interface DemoSyncReport {
  ok: boolean;
  /** One line for the terminal: what happened, and on failure the reason and how to retry. */
  line: string;
}

interface SyncDeps {
  db: Knex;
  tenantId: string;
  /** The API root, http://host:port/v1. */
  apiRoot: string;
  secretKey: string;
  /** Give up after this long (the run goes on in Temporal; the line says so). */
  timeoutMs?: number;
  /** Stop early (npm start is shutting down). */
  signal?: AbortSignal;
  /** How long one request may take before it counts as not answered (and is tried again). */
  callTimeoutMs?: number;
}

/** How long npm start gives the demo's first sync before it says it failed (examples/web waits as long). */
export const DEMO_SYNC_TIMEOUT_MS = 300_000;

/** One request's bound: the drift report reads every provider through the worker. */
const CALL_TIMEOUT_MS = 60_000;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  /** Set when the request got no answer: what happened, for the failure line if time runs out. */
  unanswered?: string;
}

const RETRY = 'retry: Ctrl-C, then `npm start` again (it syncs the demo until psp_a has its catalogue)';
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(t);
      resolve();
    };
    // Removed on timeout too: a long poll would otherwise pile listeners onto the one signal.
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', wake);
      resolve();
    }, ms);
    signal?.addEventListener('abort', wake, { once: true });
  });

/**
 * The demo's first sync, through the service's own API as a tenant would run it: read the drift
 * report, drain it with its confirm_count (asynchronously: the run may outlast an HTTP request),
 * then follow the run to its end. A 503 (the worker still warming up) or a count that moved is
 * retried within the time limit.
 */
export async function syncDemoCatalogue(deps: SyncDeps): Promise<DemoSyncReport> {
  const deadline = Date.now() + (deps.timeoutMs ?? DEMO_SYNC_TIMEOUT_MS);
  const callTimeoutMs = deps.callTimeoutMs ?? CALL_TIMEOUT_MS;
  // A request that gets no answer in time (the drift report waits for a worker still starting on a
  // busy machine) or no connection is one more try within the deadline, as a 503 is: never the end.
  const attempt = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    // Never past the deadline: the example waits as long as the sync has, not a request longer.
    const ms = Math.max(1, Math.min(callTimeoutMs, deadline - Date.now()));
    try {
      const res = await fetch(`${deps.apiRoot}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${deps.secretKey}`,
          'content-type': 'application/json',
          ...(method === 'POST' ? { prefer: 'respond-async' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(ms),
      });
      return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
    } catch (err) {
      const reason =
        (err as Error).name === 'TimeoutError'
          ? `no answer within ${ms / 1000} s`
          : `no connection (${(err as Error).message})`;
      return { status: 0, body: {}, unanswered: `${method} /v1${path}: ${reason}` };
    }
  };
  const failed = (reason: string): DemoSyncReport => ({
    ok: false,
    line: `Demo catalogue sync failed: ${reason}; ${RETRY}`,
  });

  let runId: string | undefined;
  let lastRefusal = '';
  while (!runId) {
    if (deps.signal?.aborted) return failed('npm start is stopping');
    if (Date.now() > deadline) return failed(lastRefusal || 'timed out before the run started');
    const report = await attempt('GET', '/sync');
    const answer =
      report.status === 200 ? await attempt('POST', '/sync', { confirm_count: report.body.confirm_count }) : report;
    if (answer.status === 202 && typeof answer.body.run_id === 'string') {
      runId = answer.body.run_id;
      break;
    }
    // A run begun by an earlier start is still draining: its writes count as ours.
    if (answer.status === 409 && answer.body.error === 'sync_in_progress') return waitUntilSellable(deps, deadline);
    lastRefusal =
      answer.unanswered ??
      `${answer === report ? 'GET' : 'POST'} /v1/sync answered ${answer.status} ${String(answer.body.error ?? '')}: ${String(answer.body.detail ?? '')}`;
    // 503 drift_incomplete (a provider or the worker not answering yet), no answer yet and a count that
    // moved pass with time.
    if (!answer.unanswered && answer.status !== 503 && answer.body.error !== 'count_mismatch')
      return failed(lastRefusal);
    await sleep(2000, deps.signal);
  }

  const run = runId;
  for (;;) {
    const state = await withTenant(deps.db, deps.tenantId, (trx) => syncRunState(trx, run));
    if (state && state.status !== 'running') return judge(deps, state.result);
    if (deps.signal?.aborted) return failed('npm start is stopping');
    if (Date.now() > deadline)
      return failed(
        `run ${run} still running after ${Math.round((deps.timeoutMs ?? DEMO_SYNC_TIMEOUT_MS) / 1000)} s (see it in the Temporal UI)`,
      );
    await sleep(1000, deps.signal);
  }
}

async function judge(deps: SyncDeps, result: Record<string, unknown> | null): Promise<DemoSyncReport> {
  const failures = [
    ...((result?.failed as SyncOutcome[] | undefined) ?? []),
    ...((result?.skipped as SyncOutcome[] | undefined) ?? []),
  ];
  const firstFailure = failures[0] ? `${subjectOf(failures[0])} at ${failures[0].provider}: ${failures[0].detail}` : '';
  if (!(await demoCanSell(deps.db, deps.tenantId))) {
    return {
      ok: false,
      line: `Demo catalogue sync failed: ${firstFailure || 'nothing reached psp_a in test mode'}; ${RETRY}`,
    };
  }
  const synced = Number(result?.synced ?? 0);
  const partial = failures.length ? ` (${failures.length} not synced, first: ${firstFailure})` : '';
  return {
    ok: true,
    line: `Demo catalogue synced to the emulators: ${synced} product/provider pairs written${partial}. npm run example:web can sell.`,
  };
}

/** Another run holds the drain: wait for psp_a to have the catalogue. */
async function waitUntilSellable(deps: SyncDeps, deadline: number): Promise<DemoSyncReport> {
  while (Date.now() < deadline && !deps.signal?.aborted) {
    if (await demoCanSell(deps.db, deps.tenantId))
      return {
        ok: true,
        line: 'Demo catalogue synced to the emulators (by a run begun earlier). npm run example:web can sell.',
      };
    await sleep(1000, deps.signal);
  }
  return {
    ok: false,
    line: `Demo catalogue sync failed: another sync run holds the drain and psp_a has no catalogue yet; ${RETRY}`,
  };
}
