import { CliFailure, listAll, request, type ApiConfig } from './api-client';

/** A per-provider event of a sync run (GET /v1/sync/events?run_id=). */
export interface SyncEvent {
  provider: string;
  status: string;
  reason: string | null;
  detail: unknown;
  created_at: string;
}

export interface RunOutcome {
  run_id: string;
  events: SyncEvent[];
  /** Every provider succeeded (none failed, none skipped). */
  ok: boolean;
}

export const runEvents = (cfg: ApiConfig, runId: string) =>
  listAll<SyncEvent>(cfg, `/sync/events?run_id=${encodeURIComponent(runId)}`);

export function describeEvent(e: SyncEvent): string {
  const d = (e.detail ?? {}) as { outcome?: string; synced?: number; failed?: number; modes?: string[] };
  const counts = d.outcome ? ` ${d.outcome}, ${d.synced ?? 0} synced, ${d.failed ?? 0} failed` : '';
  const modes = d.modes?.length ? ` [${d.modes.join(', ')}]` : '';
  return `${e.provider}: ${e.status}${counts}${modes}${e.reason ? ` — ${e.reason}` : ''}`;
}

/**
 * The gated sync: POST /v1/sync with the report's count, answered at once (Prefer: respond-async)
 * with the run id, then its per-provider events as they are recorded, one progress line each,
 * until every provider the tenant has connected (GET /v1/readiness) has one. A refusal
 * (count_mismatch, drift_incomplete, sync_in_progress) comes back as a CliFailure with its code.
 */
export async function runGatedSync(
  cfg: ApiConfig,
  confirmCount: number,
  opts: { timeoutMs: number; onEvent: (e: SyncEvent) => void },
): Promise<RunOutcome> {
  const providers = (await request<{ providers: { provider: string }[] }>(cfg, 'GET', '/readiness')).body.providers.map(
    (p) => p.provider,
  );
  const started = await request<{ run_id: string }>(
    cfg,
    'POST',
    '/sync',
    { confirm_count: confirmCount },
    { prefer: 'respond-async' },
  );
  const runId = started.body.run_id;
  return { run_id: runId, ...(await waitForRun(cfg, runId, providers, opts)) };
}

async function waitForRun(
  cfg: ApiConfig,
  runId: string,
  providers: string[],
  opts: { timeoutMs: number; onEvent: (e: SyncEvent) => void },
): Promise<{ events: SyncEvent[]; ok: boolean }> {
  const seen = new Map<string, SyncEvent>();
  const deadline = Date.now() + opts.timeoutMs;
  let pause = 200;
  while (providers.some((p) => !seen.has(p))) {
    for (const e of await runEvents(cfg, runId))
      if (!seen.has(e.provider)) {
        seen.set(e.provider, e);
        opts.onEvent(e);
      }
    if (providers.every((p) => seen.has(p))) break;
    if (Date.now() > deadline)
      throw new CliFailure(
        'run_timeout',
        `run ${runId} has no event yet for ${providers.filter((p) => !seen.has(p)).join(', ')}; follow it with billing events --run-id ${runId}`,
      );
    // Polling an HTTP API: back off to a second between looks.
    await new Promise((r) => setTimeout(r, pause));
    pause = Math.min(pause * 2, 1000);
  }
  const events = [...seen.values()];
  return { events, ok: events.every((e) => e.status === 'succeeded') };
}
