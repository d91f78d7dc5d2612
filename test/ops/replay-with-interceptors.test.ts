import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import proto from '@temporalio/proto';
import { ROOT_DIR } from '../../runtime/config';
import { startTracing } from '../../runtime/tracing';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../../temporal/worker';

/**
 * The workflow code now runs with the OpenTelemetry workflow interceptors, bundled the way
 * `npm run build` bundles it (issue #22). Runs that started on a worker without them must keep
 * replaying after the deploy: a history recorded before the interceptors (the previous release's
 * sync run) replays on the traced bundle without a determinism error.
 */
describe('workflows recorded without the tracing interceptors', () => {
  it('replay on the traced bundle npm run build makes (interceptors in, span sink registered)', async () => {
    const history = proto.temporal.api.history.v1.History.decode(fs.readFileSync(path.join(ROOT_DIR, 'test/temporal/fixtures/sync-run-legacy.history.bin')));
    expect((history.events ?? []).length).toBeGreaterThan(10);
    const require = createRequire(import.meta.url);
    const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES.map((m) => require.resolve(m)) });
    expect(code).toContain('OpenTelemetryInboundInterceptor');
    const tracing = startTracing(null, 'billing-worker');
    await Worker.runReplayHistory({ workflowBundle: { code }, sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) } }, history, 'sync-legacy-fixture');
  }, 240_000);
});
