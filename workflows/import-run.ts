import {
  ApplicationFailure,
  ContinueAsNew,
  continueAsNew,
  defineQuery,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { Mode, ProviderId, WebProviderId } from '../domain/providers';
import { inTurn } from './work-turn';

/**
 * A page reads one page of the provider (paced under its documented limit) or one page of an
 * uploaded file's lines, and hands each subscription to its customer, a few customers at a time
 * (domain/import-concurrency.ts; one customer's items in order). It heartbeats per item,
 * so a worker that dies mid-page is noticed in seconds and the page is run again on another
 * (idempotent: the same subscription handed over twice changes nothing). A provider that keeps
 * failing fails the import after the attempts, with the reason on the import. A page runs in one
 * of its tenant's turns of the worker (domain/import-concurrency.ts), waiting for one on a timer.
 */
const { importProviderPage, importFilePage } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 20 },
});
const { finishImportRun } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

export interface ImportRunInput {
  tenantId: string;
  importId: string;
  /** `provider_api`: page through the provider's list; `file`: the uploaded lines stored with the import. */
  source: 'provider_api' | 'file';
  /** provider_api: the provider and its default connection. */
  provider?: WebProviderId;
  /** The connection each provider is read through (ids only). */
  connections: Partial<Record<ProviderId, string>>;
  /** provider_api: the modes the connection has a credential for, read one after the other. */
  modes?: Mode[];
  /** Where the run stands; carried across continue-as-new. */
  at?: ImportPosition;
}

export interface ImportPosition {
  modeIndex: number;
  /** The provider's cursor of the next page (null: the first page of the mode). */
  cursor: string | null;
  /** Subscriptions listed so far (they number the import's items). */
  listed: number;
  /** file: the last line handled. */
  afterLine: number;
  pages: number;
}

export interface ImportProgress {
  import_id: string;
  pages: number;
  listed: number;
  after_line: number;
  done: boolean;
}

/** `import-<tenant>-<import>`: started by a request (temporal/workflow-starts.ts) or by a connection's proof. */
export const importRunWorkflowId = (tenantId: string, importId: string) => `import-${tenantId}-${importId}`;

export const importProgressQuery = defineQuery<ImportProgress>('progress');

/** Pages per run before continue-as-new: the history holds a few pages, never the account. */
const PAGES_PER_RUN = 50;

/**
 * `import-<tenant>-<import>`: one import (docs/reconciliation.md). Page by page, each page's
 * subscriptions become events of their customers' own lifecycle workflows (web) or store
 * purchase writes (stores), tagged as imported; the position is in the workflow's state and the
 * progress in the import's rows, readable while it runs (the `progress` query, GET
 * /v1/imports/{id}). No row of a file and no subscription passes through this history: the
 * activities read them from storage and from the provider.
 */
export async function importRunWorkflow(input: ImportRunInput): Promise<void> {
  const at: ImportPosition = input.at ?? { modeIndex: 0, cursor: null, listed: 0, afterLine: 0, pages: 0 };
  let done = false;
  setHandler(importProgressQuery, () => ({
    import_id: input.importId,
    pages: at.pages,
    listed: at.listed,
    after_line: at.afterLine,
    done,
  }));
  const base = { tenantId: input.tenantId, importId: input.importId };
  try {
    for (let page = 0; ; page++) {
      if (page >= PAGES_PER_RUN || workflowInfo().continueAsNewSuggested)
        await continueAsNew<typeof importRunWorkflow>({ ...input, at });
      if (input.source === 'provider_api') {
        const modes = input.modes ?? [];
        if (at.modeIndex >= modes.length) break;
        const r = await inTurn(() =>
          importProviderPage({
            ...base,
            provider: input.provider!,
            connectionId: input.connections[input.provider!]!,
            mode: modes[at.modeIndex],
            cursor: at.cursor,
            listed: at.listed,
          }),
        );
        at.listed += r.seen;
        at.pages++;
        if (r.next) at.cursor = r.next;
        else Object.assign(at, { modeIndex: at.modeIndex + 1, cursor: null });
      } else {
        const r = await inTurn(() =>
          importFilePage({ ...base, connections: input.connections, afterLine: at.afterLine }),
        );
        if (r.lastLine === null) break;
        at.afterLine = r.lastLine;
        at.pages++;
      }
    }
    done = true;
    await finishImportRun({ ...base, status: 'succeeded', failure: null });
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    done = true;
    await finishImportRun({ ...base, status: 'failed', failure: failureOf(err) });
  }
}

/** Our own words for why an import stopped: a provider's answer is never echoed to the tenant. */
function failureOf(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  const type = cause instanceof ApplicationFailure ? cause.type : null;
  if (type === 'ProviderRejected')
    return 'The provider refused to list subscriptions with this connection’s credential; check the connection and import again.';
  if (type === 'ProviderRateLimited' || type === 'ProviderUnreachable')
    return 'The provider could not be reached (or kept refusing for its rate limit); import again later: what was imported stays.';
  return 'The import stopped on an internal error; import again: what was imported stays.';
}
