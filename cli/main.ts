import fs from 'node:fs';
import { Command, Option } from 'commander';
import { CliFailure, configFromEnv, request, type ApiConfig } from './api-client';
import { writeCatalogueChanges } from './apply';
import { describeChange } from './catalogue-diff';
import { InvalidCatalogue, loadCatalogueFile, SCHEMA_PATH, type LoadedCatalogue } from './catalogue-file';
import { annotation, underGitHubActions } from './github';
import {
  describeFinding,
  hasChanges,
  makePlan,
  planJson,
  planLines,
  providerChanges,
  readDrift,
  type Plan,
} from './plan';
import { catalogueYaml } from './pull';
import { readServiceCatalogue } from './service-state';
import {
  compareAccess,
  describeDifference,
  followAliases,
  readKnownAs,
  readRevenueCatCustomers,
  readServiceAccess,
} from './revenuecat-compare';
import { describeEvent, runEvents, runGatedSync, type RunOutcome } from './sync-run';

/** Exit codes (docs/ci.md): plan says 2 when there is something to do. */
const OK = 0;
const FAILED = 1;
const CHANGES = 2;

/** `--insecure` (a global option, before or after the command): plain http to another host is allowed. */
let allowInsecure = false;
const apiConfig = () => configFromEnv(process.env, { allowInsecure });

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);
const json = (value: unknown) => out(JSON.stringify(value, null, 2));

const timeoutOption = () =>
  new Option('--timeout <seconds>', 'how long to wait for the sync run').default('600').argParser((v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error('--timeout is a number of seconds');
    return String(n);
  });

/** Plan annotations: each change at its product's line in the file, findings for a person as warnings. */
function annotatePlan(plan: Plan, file: LoadedCatalogue) {
  for (const c of plan.changes)
    out(
      annotation('notice', describeChange(c), { file: file.file, line: file.lineOf.get(c.sku), title: 'billing plan' }),
    );
  for (const f of plan.drift.findings)
    out(annotation(f.automatable ? 'notice' : 'warning', describeFinding(f), { title: 'billing plan' }));
  for (const n of plan.notes)
    out(annotation('warning', n.text, { file: file.file, line: n.sku ? file.lineOf.get(n.sku) : undefined }));
}

function printPlan(plan: Plan, file: LoadedCatalogue, asJson: boolean) {
  if (asJson) return json(planJson(plan));
  for (const line of planLines(plan)) out(line);
  if (underGitHubActions()) annotatePlan(plan, file);
}

async function planCommand(opts: { file: string; json?: boolean }): Promise<number> {
  const file = loadCatalogueFile(opts.file);
  const plan = await makePlan(apiConfig(), file);
  printPlan(plan, file, !!opts.json);
  return hasChanges(plan) ? CHANGES : OK;
}

function printRun(run: RunOutcome, events: Awaited<ReturnType<typeof runEvents>>) {
  out(`Events of run ${run.run_id}:`);
  for (const e of events) out(`  ${describeEvent(e)}`);
  out(run.ok ? 'Every provider succeeded.' : 'Not every provider succeeded: see the events above.');
  if (!run.ok && underGitHubActions())
    for (const e of events.filter((x) => x.status !== 'succeeded'))
      out(annotation('error', describeEvent(e), { title: 'billing sync' }));
}

/** The gated sync with progress lines; a count_mismatch is thrown for the caller. */
async function syncWithProgress(cfg: ApiConfig, confirmCount: number, timeoutSeconds: string, asJson: boolean) {
  let n = 0;
  const run = await runGatedSync(cfg, confirmCount, {
    timeoutMs: Number(timeoutSeconds) * 1000,
    onEvent: (e) => (asJson ? err : out)(`[${++n}] ${describeEvent(e)}`),
  });
  if (!asJson) out(`Sync run ${run.run_id} finished.`);
  const events = await runEvents(cfg, run.run_id);
  return { run, events };
}

async function applyCommand(opts: { file: string; json?: boolean; timeout: string }): Promise<number> {
  const asJson = !!opts.json;
  const say = asJson ? err : out;
  const file = loadCatalogueFile(opts.file);
  const cfg = apiConfig();
  const plan = await makePlan(cfg, file);
  if (!asJson) for (const line of planLines(plan)) out(line);
  if (!hasChanges(plan)) {
    if (asJson) json({ ...planJson(plan), applied: [], run_id: null, events: [], ok: true });
    return OK;
  }
  const applied: string[] = [];
  await writeCatalogueChanges(cfg, plan, (line) => {
    applied.push(line);
    say(line);
  });
  // The report after the writes: its count is what the sync confirms.
  const drift = await readDrift(cfg);
  if (!providerChanges({ drift }).length) {
    say('Nothing for the providers to do.');
    if (asJson) json({ ...planJson(plan), applied, run_id: null, events: [], ok: true });
    return OK;
  }
  say(
    `Syncing ${drift.findings.filter((f) => f.automatable).length} provider changes (confirm_count ${drift.confirm_count})…`,
  );
  try {
    const { run, events } = await syncWithProgress(cfg, drift.confirm_count, opts.timeout, asJson);
    if (asJson) json({ ...planJson(plan), applied, run_id: run.run_id, events, ok: run.ok });
    else printRun(run, events);
    return run.ok ? OK : FAILED;
  } catch (e) {
    if (!(e instanceof CliFailure) || e.code !== 'count_mismatch') throw e;
    // Someone changed something between the report and the sync: plan once more and stop with it.
    const again = await makePlan(cfg, file);
    if (asJson) {
      json({ error: 'count_mismatch', detail: e.message, applied, plan: planJson(again) });
    } else {
      out(`count_mismatch: ${e.message}`);
      out('Something changed between the report and the sync; nothing was synced. The plan now:');
      printPlan(again, file, false);
    }
    if (underGitHubActions()) out(annotation('error', e.message, { title: 'billing apply' }));
    return FAILED;
  }
}

async function pullCommand(opts: { json?: boolean }): Promise<number> {
  const service = await readServiceCatalogue(apiConfig());
  const catalogue = { products: service.products, paywall: service.paywall };
  if (opts.json) json({ version: 1, ...catalogue });
  else process.stdout.write(catalogueYaml(catalogue));
  return OK;
}

async function syncCommand(opts: { confirmCount?: string; json?: boolean; timeout: string }): Promise<number> {
  const cfg = apiConfig();
  const count = opts.confirmCount === undefined ? (await readDrift(cfg)).confirm_count : Number(opts.confirmCount);
  if (!Number.isInteger(count) || count < 0)
    throw new CliFailure('invalid_option', '--confirm-count is a whole number');
  const { run, events } = await syncWithProgress(cfg, count, opts.timeout, !!opts.json);
  if (opts.json) json({ run_id: run.run_id, ok: run.ok, events });
  else printRun(run, events);
  return run.ok ? OK : FAILED;
}

interface ReadinessRow {
  provider: string;
  live_ready: boolean;
  test_ready: boolean;
  human_action: string | null;
}

async function readinessCommand(opts: { json?: boolean }): Promise<number> {
  const body = (await request<{ providers: ReadinessRow[] }>(apiConfig(), 'GET', '/readiness')).body;
  if (opts.json) json(body);
  else
    for (const r of body.providers)
      out(
        `${r.provider}: live ${r.live_ready ? 'ready' : 'not ready'}, test ${r.test_ready ? 'ready' : 'not ready'}${r.human_action ? ` — ${r.human_action}` : ''}`,
      );
  return OK;
}

async function eventsCommand(opts: { runId: string; json?: boolean }): Promise<number> {
  const events = await runEvents(apiConfig(), opts.runId);
  if (opts.json) json({ run_id: opts.runId, events });
  else for (const e of events) out(describeEvent(e));
  return OK;
}

/** The largest export the comparison reads (it holds the file in memory). */
const MAX_COMPARE_BYTES = 256 * 1024 * 1024;

async function revenuecatCompareCommand(opts: {
  file: string;
  sandbox?: boolean;
  tolerance: string;
  json?: boolean;
}): Promise<number> {
  const size = fs.statSync(opts.file, { throwIfNoEntry: false })?.size;
  if (size === undefined) throw new CliFailure('invalid_file', `${opts.file}: no such file`);
  if (size > MAX_COMPARE_BYTES)
    throw new CliFailure('invalid_file', `${opts.file}: larger than ${MAX_COMPARE_BYTES / 1024 / 1024} MiB`);
  const sandbox = !!opts.sandbox;
  const exported = readRevenueCatCustomers(fs.readFileSync(opts.file, 'utf8'), { sandbox, now: Date.now() });
  const ours = await readServiceAccess(apiConfig(), { sandbox });
  // One customer under several ids: first the ids RevenueCat's lines name together, then, for the
  // customers still differing, the ids this service knows them by (its aliases).
  const tolerance = Number(opts.tolerance) * 1000;
  let joined = followAliases(exported.access, ours, exported.links, new Map());
  let result = compareAccess(joined.theirs, joined.ours, tolerance);
  if (result.differences.length) {
    const differing = [...new Set(result.differences.map((d) => d.app_user_id))];
    const { knownAs, refused } = await readKnownAs(apiConfig(), differing);
    if (refused)
      err(
        "note: the key lacks customers:read, so the ids this service knows a customer by were not followed (RevenueCat's were).",
      );
    if (knownAs.size) {
      joined = followAliases(exported.access, ours, exported.links, knownAs);
      result = compareAccess(joined.theirs, joined.ours, tolerance);
    }
  }
  if (opts.json) json(result);
  else {
    for (const d of result.differences) out(describeDifference(d));
    out(
      `Compared ${result.users} app users (${sandbox ? 'sandbox' : 'live'}): ${result.agreeing} agree, ${result.users - result.agreeing} differ.`,
    );
  }
  return result.differences.length ? CHANGES : OK;
}

/** A failure as the last lines of the output: its code first, and as an annotation under GitHub Actions. */
function report(e: unknown, asJson: boolean): number {
  if (e instanceof InvalidCatalogue) {
    if (asJson) json({ error: 'invalid_catalogue', problems: e.problems });
    for (const p of e.problems) {
      err(`error: invalid_catalogue: ${p.file}:${p.line}:${p.column}: ${p.field}: ${p.message}`);
      if (underGitHubActions())
        out(
          annotation('error', `${p.field}: ${p.message}`, { file: p.file, line: p.line, title: 'invalid_catalogue' }),
        );
    }
    return FAILED;
  }
  if (e instanceof CliFailure) {
    if (asJson) json({ error: e.code, detail: e.message });
    err(`error: ${e.code}: ${e.message}`);
    if (underGitHubActions()) out(annotation('error', `${e.code}: ${e.message}`, { title: e.code }));
    return FAILED;
  }
  err(`error: ${(e as Error).stack ?? String(e)}`);
  return FAILED;
}

function run<O extends { json?: boolean }>(action: (opts: O) => Promise<number>) {
  return async (opts: O) => {
    try {
      process.exitCode = await action(opts);
    } catch (e) {
      process.exitCode = report(e, !!opts.json);
    }
  };
}

export function buildProgram(): Command {
  const program = new Command('billing')
    .description(
      'The billing service from CI: the catalogue as a file (pull, plan, apply), the gated sync, readiness, run events, ' +
        "and RevenueCat's customers compared with this service's (revenuecat:compare).\n" +
        'Configured by BILLING_API_URL (the API base URL, ending in /v1) and BILLING_SECRET_KEY.',
    )
    .option('--insecure', 'allow a plain-http BILLING_API_URL to another host (the secret key travels unencrypted)')
    .hook('preAction', (cmd) => {
      allowInsecure = !!cmd.opts().insecure;
    })
    .showHelpAfterError()
    .addHelpText('after', '\nExit codes: 0 done (plan: nothing to do), 1 error, 2 plan found changes. See docs/ci.md.');
  const catalogue = program
    .command('catalogue')
    .description('The catalogue as code: products, per-country prices and the paywall in one YAML file');
  catalogue
    .command('pull')
    .description("Write the tenant's catalogue as YAML on stdout (stable order, a header comment)")
    .option('--json', 'the catalogue as JSON instead')
    .action(run(pullCommand));
  catalogue
    .command('plan')
    .description(
      'Diff the file against the service and each provider (drift report); exit 0 nothing to do, 2 changes, 1 error',
    )
    .requiredOption('-f, --file <file>', 'the catalogue file')
    .option('--json', 'the plan as JSON')
    .action(run(planCommand));
  catalogue
    .command('apply')
    .description(
      'Write the catalogue changes, run the gated sync and print its events; exit 0 only when every provider succeeded',
    )
    .requiredOption('-f, --file <file>', 'the catalogue file')
    .option('--json', 'the outcome as JSON (progress goes to stderr)')
    .addOption(timeoutOption())
    .action(run(applyCommand));
  catalogue
    .command('schema')
    .description('Print the JSON Schema of the file (for editors)')
    .action(() => {
      process.stdout.write(fs.readFileSync(SCHEMA_PATH, 'utf8'));
    });
  program
    .command('sync')
    .description("Run the gated sync with the drift report's confirm_count; exit 0 only when every provider succeeded")
    .option('--confirm-count <n>', 'confirm this count instead of reading the report')
    .option('--json', 'the outcome as JSON (progress goes to stderr)')
    .addOption(timeoutOption())
    .action(run(syncCommand));
  program
    .command('revenuecat:compare')
    .description(
      "Compare RevenueCat's customers (an export CSV) with this service's active entitlements, customer by customer (both sides' aliases followed); exit 0 same, 2 differences",
    )
    .requiredOption(
      '--file <csv>',
      "RevenueCat's export (; or , separated): rc_original_app_user_id/rc_last_seen_app_user_id_alias (or app_user_id), entitlement_identifiers (or active_entitlements), effective_end_time (or expires_date)",
    )
    .option('--sandbox', 'compare sandbox access instead of live')
    .addOption(
      new Option('--tolerance <seconds>', 'ends this close agree').default('3600').argParser((v) => {
        const n = Number(v);
        if (!Number.isFinite(n) || n < 0) throw new Error('--tolerance is a number of seconds');
        return String(n);
      }),
    )
    .option('--json', 'the comparison as JSON')
    .action(run(revenuecatCompareCommand));
  program
    .command('readiness')
    .description('Per provider: can the app transact, and what is missing')
    .option('--json', 'the report as JSON')
    .action(run(readinessCommand));
  program
    .command('events')
    .description('The per-provider events of a sync run')
    .requiredOption('--run-id <id>', 'the run id a sync answered')
    .option('--json', 'the events as JSON')
    .action(run(eventsCommand));
  return program;
}

await buildProgram().parseAsync(process.argv);
