import type Router from '@koa/router';
import { exactRouter } from '../router';
import type { Services } from '../../operations/services';
import type { z } from 'zod';
import { listSyncRuns, type syncRunRow } from '../../operations/sync/runs';
import type { Operation } from '../../operations/types';
import { readThrough } from './run-operation';
import { formatDate, html } from './html';
import { page } from './layout';

/**
 * Sync runs, newest first, each with the workflow id it recorded (`sync_runs.workflow_id`) as text: what the operator
 * looks up in Temporal (docs/operations.md), read with sync.runs as the signed-in person. No link
 * to the Temporal UI: it is the operator's, and shows every tenant's workflows.
 */
export function syncRunsPage(services: Services): Router {
  const r = exactRouter();
  r.get('/sync-runs', async (ctx) => {
    const user = ctx.state.user!;
    const { data: runs } = await readThrough<{ data: z.infer<typeof syncRunRow>[] }>(
      services,
      ctx,
      listSyncRuns as Operation,
    );
    ctx.type = 'html';
    ctx.body = page({
      title: 'Sync runs',
      user,
      csrf: ctx.state.csrf!,
      body:
        runs.length === 0
          ? html`<p>No sync has run yet.</p>`
          : html`<div class="scroll" role="region" tabindex="0" aria-label="Sync runs"><table><caption class="skip">Sync runs</caption><thead><tr><th scope="col">Run</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Requested by</th><th scope="col">Started</th><th scope="col">Finished</th></tr></thead><tbody>
${runs.map(
  (run) => html`<tr><td><code>${run.workflow_id ?? '—'}</code></td>
<td>${run.kind}</td><td>${run.status}</td><td>${run.requested_by ?? '—'}</td><td>${formatDate(run.created_at)}</td><td>${formatDate(run.finished_at)}</td></tr>`,
)}
</tbody></table></div>`,
    });
  });
  return r;
}
