import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
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

/** Where one run of the command reads its configuration and writes: the process's own (cli/billing.mjs) or a caller's. */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** One run: its io, and `--insecure` (a global option, before or after the command: plain http to another host is allowed). */
class Invocation {
  insecure = false;
  exitCode = OK;
  constructor(readonly io: CliIo) {}
  apiConfig = () => configFromEnv(this.io.env, { allowInsecure: this.insecure });
  out = (line: string) => this.io.stdout.write(`${line}\n`);
  err = (line: string) => this.io.stderr.write(`${line}\n`);
  json = (value: unknown) => this.out(JSON.stringify(value, null, 2));
  github = () => underGitHubActions(this.io.env);
  annotation = (...[level, message, where]: Parameters<typeof annotation>) =>
    annotation(level, message, where, { env: this.io.env, cwd: this.io.cwd });
  loadFile = (file: string) => loadCatalogueFile(file, this.io.cwd);
}

const timeoutOption = () =>
  new Option('--timeout <seconds>', 'how long to wait for the sync run').default('600').argParser((v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error('--timeout is a number of seconds');
    return String(n);
  });

/** Plan annotations: each change at its product's line in the file, findings for a person as warnings. */
function annotatePlan(c: Invocation, plan: Plan, file: LoadedCatalogue) {
  for (const change of plan.changes)
    c.out(
      c.annotation('notice', describeChange(change), {
        file: file.file,
        line: file.lineOf.get(change.sku),
        title: 'billing plan',
      }),
    );
  for (const f of plan.drift.findings)
    c.out(c.annotation(f.automatable ? 'notice' : 'warning', describeFinding(f), { title: 'billing plan' }));
  for (const n of plan.notes)
    c.out(c.annotation('warning', n.text, { file: file.file, line: n.sku ? file.lineOf.get(n.sku) : undefined }));
}

function printPlan(c: Invocation, plan: Plan, file: LoadedCatalogue, asJson: boolean) {
  if (asJson) return c.json(planJson(plan));
  for (const line of planLines(plan)) c.out(line);
  if (c.github()) annotatePlan(c, plan, file);
}

async function planCommand(c: Invocation, opts: { file: string; json?: boolean }): Promise<number> {
  const file = c.loadFile(opts.file);
  const plan = await makePlan(c.apiConfig(), file);
  printPlan(c, plan, file, !!opts.json);
  return hasChanges(plan) ? CHANGES : OK;
}

function printRun(c: Invocation, run: RunOutcome, events: Awaited<ReturnType<typeof runEvents>>) {
  c.out(`Events of run ${run.run_id}:`);
  for (const e of events) c.out(`  ${describeEvent(e)}`);
  c.out(run.ok ? 'Every provider succeeded.' : 'Not every provider succeeded: see the events above.');
  if (!run.ok && c.github())
    for (const e of events.filter((x) => x.status !== 'succeeded'))
      c.out(c.annotation('error', describeEvent(e), { title: 'billing sync' }));
}

/** The gated sync with progress lines; a count_mismatch is thrown for the caller. */
async function syncWithProgress(
  c: Invocation,
  cfg: ApiConfig,
  confirmCount: number,
  timeoutSeconds: string,
  asJson: boolean,
) {
  let n = 0;
  const run = await runGatedSync(cfg, confirmCount, {
    timeoutMs: Number(timeoutSeconds) * 1000,
    onEvent: (e) => (asJson ? c.err : c.out)(`[${++n}] ${describeEvent(e)}`),
  });
  if (!asJson) c.out(`Sync run ${run.run_id} finished.`);
  const events = await runEvents(cfg, run.run_id);
  return { run, events };
}

async function applyCommand(c: Invocation, opts: { file: string; json?: boolean; timeout: string }): Promise<number> {
  const asJson = !!opts.json;
  const say = asJson ? c.err : c.out;
  const file = c.loadFile(opts.file);
  const cfg = c.apiConfig();
  const plan = await makePlan(cfg, file);
  if (!asJson) for (const line of planLines(plan)) c.out(line);
  if (!hasChanges(plan)) {
    if (asJson) c.json({ ...planJson(plan), applied: [], run_id: null, events: [], ok: true });
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
    if (asJson) c.json({ ...planJson(plan), applied, run_id: null, events: [], ok: true });
    return OK;
  }
  say(
    `Syncing ${drift.findings.filter((f) => f.automatable).length} provider changes (confirm_count ${drift.confirm_count})…`,
  );
  try {
    const { run, events } = await syncWithProgress(c, cfg, drift.confirm_count, opts.timeout, asJson);
    if (asJson) c.json({ ...planJson(plan), applied, run_id: run.run_id, events, ok: run.ok });
    else printRun(c, run, events);
    return run.ok ? OK : FAILED;
  } catch (e) {
    if (!(e instanceof CliFailure) || e.code !== 'count_mismatch') throw e;
    // Someone changed something between the report and the sync: plan once more and stop with it.
    const again = await makePlan(cfg, file);
    if (asJson) {
      c.json({ error: 'count_mismatch', detail: e.message, applied, plan: planJson(again) });
    } else {
      c.out(`count_mismatch: ${e.message}`);
      c.out('Something changed between the report and the sync; nothing was synced. The plan now:');
      printPlan(c, again, file, false);
    }
    if (c.github()) c.out(c.annotation('error', e.message, { title: 'billing apply' }));
    return FAILED;
  }
}

async function pullCommand(c: Invocation, opts: { json?: boolean }): Promise<number> {
  const service = await readServiceCatalogue(c.apiConfig());
  const catalogue = { products: service.products, paywall: service.paywall };
  if (opts.json) c.json({ version: 1, ...catalogue });
  else c.io.stdout.write(catalogueYaml(catalogue));
  return OK;
}

async function syncCommand(
  c: Invocation,
  opts: { confirmCount?: string; json?: boolean; timeout: string },
): Promise<number> {
  const cfg = c.apiConfig();
  const count = opts.confirmCount === undefined ? (await readDrift(cfg)).confirm_count : Number(opts.confirmCount);
  if (!Number.isInteger(count) || count < 0)
    throw new CliFailure('invalid_option', '--confirm-count is a whole number');
  const { run, events } = await syncWithProgress(c, cfg, count, opts.timeout, !!opts.json);
  if (opts.json) c.json({ run_id: run.run_id, ok: run.ok, events });
  else printRun(c, run, events);
  return run.ok ? OK : FAILED;
}

interface ReadinessRow {
  provider: string;
  live_ready: boolean;
  test_ready: boolean;
  human_action: string | null;
}

async function readinessCommand(c: Invocation, opts: { json?: boolean }): Promise<number> {
  const body = (await request<{ providers: ReadinessRow[] }>(c.apiConfig(), 'GET', '/readiness')).body;
  if (opts.json) c.json(body);
  else
    for (const r of body.providers)
      c.out(
        `${r.provider}: live ${r.live_ready ? 'ready' : 'not ready'}, test ${r.test_ready ? 'ready' : 'not ready'}${r.human_action ? ` — ${r.human_action}` : ''}`,
      );
  return OK;
}

async function eventsCommand(c: Invocation, opts: { runId: string; json?: boolean }): Promise<number> {
  const events = await runEvents(c.apiConfig(), opts.runId);
  if (opts.json) c.json({ run_id: opts.runId, events });
  else for (const e of events) c.out(describeEvent(e));
  return OK;
}

/** The largest export the comparison reads (it holds the file in memory). */
const MAX_COMPARE_BYTES = 256 * 1024 * 1024;

async function revenuecatCompareCommand(
  c: Invocation,
  opts: {
    file: string;
    sandbox?: boolean;
    tolerance: string;
    json?: boolean;
  },
): Promise<number> {
  const csv = path.resolve(c.io.cwd, opts.file);
  const size = fs.statSync(csv, { throwIfNoEntry: false })?.size;
  if (size === undefined) throw new CliFailure('invalid_file', `${opts.file}: no such file`);
  if (size > MAX_COMPARE_BYTES)
    throw new CliFailure('invalid_file', `${opts.file}: larger than ${MAX_COMPARE_BYTES / 1024 / 1024} MiB`);
  const sandbox = !!opts.sandbox;
  const exported = readRevenueCatCustomers(fs.readFileSync(csv, 'utf8'), { sandbox, now: Date.now() });
  const ours = await readServiceAccess(c.apiConfig(), { sandbox });
  // One customer under several ids: first the ids RevenueCat's lines name together, then, for the
  // customers still differing, the ids this service knows them by (its aliases).
  const tolerance = Number(opts.tolerance) * 1000;
  let joined = followAliases(exported.access, ours, exported.links, new Map());
  let result = compareAccess(joined.theirs, joined.ours, tolerance);
  if (result.differences.length) {
    const differing = [...new Set(result.differences.map((d) => d.app_user_id))];
    const { knownAs, refused } = await readKnownAs(c.apiConfig(), differing);
    if (refused)
      c.err(
        "note: the key lacks customers:read, so the ids this service knows a customer by were not followed (RevenueCat's were).",
      );
    if (knownAs.size) {
      joined = followAliases(exported.access, ours, exported.links, knownAs);
      result = compareAccess(joined.theirs, joined.ours, tolerance);
    }
  }
  if (opts.json) c.json(result);
  else {
    for (const d of result.differences) c.out(describeDifference(d));
    c.out(
      `Compared ${result.users} app users (${sandbox ? 'sandbox' : 'live'}): ${result.agreeing} agree, ${result.users - result.agreeing} differ.`,
    );
  }
  return result.differences.length ? CHANGES : OK;
}

/** A failure as the last lines of the output: its code first, and as an annotation under GitHub Actions. */
function report(c: Invocation, e: unknown, asJson: boolean): number {
  if (e instanceof InvalidCatalogue) {
    if (asJson) c.json({ error: 'invalid_catalogue', problems: e.problems });
    for (const p of e.problems) {
      c.err(`error: invalid_catalogue: ${p.file}:${p.line}:${p.column}: ${p.field}: ${p.message}`);
      if (c.github())
        c.out(
          c.annotation('error', `${p.field}: ${p.message}`, { file: p.file, line: p.line, title: 'invalid_catalogue' }),
        );
    }
    return FAILED;
  }
  if (e instanceof CliFailure) {
    if (asJson) c.json({ error: e.code, detail: e.message });
    c.err(`error: ${e.code}: ${e.message}`);
    if (c.github()) c.out(c.annotation('error', `${e.code}: ${e.message}`, { title: e.code }));
    return FAILED;
  }
  c.err(`error: ${(e as Error).stack ?? String(e)}`);
  return FAILED;
}

function run<O extends { json?: boolean }>(c: Invocation, action: (c: Invocation, opts: O) => Promise<number>) {
  return async (opts: O) => {
    try {
      c.exitCode = await action(c, opts);
    } catch (e) {
      c.exitCode = report(c, e, !!opts.json);
    }
  };
}

function buildProgram(c: Invocation): Command {
  const program = new Command('billing')
    // Set before the subcommands are made, which copy them: help and usage errors go to the run's
    // io, and end the run with their exit code instead of ending the process.
    .exitOverride()
    .configureOutput({ writeOut: (t) => c.io.stdout.write(t), writeErr: (t) => c.io.stderr.write(t) })
    .description(
      'The billing service from CI: the catalogue as a file (pull, plan, apply), the gated sync, readiness, run events, ' +
        "and RevenueCat's customers compared with this service's (revenuecat:compare).\n" +
        'Configured by BILLING_API_URL (the API base URL, ending in /v1) and BILLING_SECRET_KEY.',
    )
    .option('--insecure', 'allow a plain-http BILLING_API_URL to another host (the secret key travels unencrypted)')
    .hook('preAction', (cmd) => {
      c.insecure = !!cmd.opts().insecure;
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
    .action(run(c, pullCommand));
  catalogue
    .command('plan')
    .description(
      'Diff the file against the service and each provider (drift report); exit 0 nothing to do, 2 changes, 1 error',
    )
    .requiredOption('-f, --file <file>', 'the catalogue file')
    .option('--json', 'the plan as JSON')
    .action(run(c, planCommand));
  catalogue
    .command('apply')
    .description(
      'Write the catalogue changes, run the gated sync and print its events; exit 0 only when every provider succeeded',
    )
    .requiredOption('-f, --file <file>', 'the catalogue file')
    .option('--json', 'the outcome as JSON (progress goes to stderr)')
    .addOption(timeoutOption())
    .action(run(c, applyCommand));
  catalogue
    .command('schema')
    .description('Print the JSON Schema of the file (for editors)')
    .action(() => {
      c.io.stdout.write(fs.readFileSync(SCHEMA_PATH, 'utf8'));
    });
  program
    .command('sync')
    .description("Run the gated sync with the drift report's confirm_count; exit 0 only when every provider succeeded")
    .option('--confirm-count <n>', 'confirm this count instead of reading the report')
    .option('--json', 'the outcome as JSON (progress goes to stderr)')
    .addOption(timeoutOption())
    .action(run(c, syncCommand));
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
    .action(run(c, revenuecatCompareCommand));
  program
    .command('readiness')
    .description('Per provider: can the app transact, and what is missing')
    .option('--json', 'the report as JSON')
    .action(run(c, readinessCommand));
  program
    .command('events')
    .description('The per-provider events of a sync run')
    .requiredOption('--run-id <id>', 'the run id a sync answered')
    .option('--json', 'the events as JSON')
    .action(run(c, eventsCommand));
  return program;
}

/** One command line (`argv` without node and the script) on `io`; answers its exit code (docs/ci.md). */
export async function runBilling(argv: string[], io: CliIo): Promise<number> {
  const c = new Invocation(io);
  try {
    await buildProgram(c).parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode;
    throw e;
  }
  return c.exitCode;
}
