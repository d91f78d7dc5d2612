/**
 * Autovacuum's part, for a Postgres that runs without it. This machine's server is configured for
 * CI with `autovacuum = off`; a production server (and the Postgres `npm start` embeds, and the
 * compose image) runs it. Without it a bench's scratch database never gets statistics: the planner
 * reads a table that grew to 30,000 deliveries as a few rows, and the lifecycle write's join scans
 * every delivery of the tenant, a little slower with each event (bench/RESULTS.md, "Statistics").
 *
 * Every naptime (60 s, autovacuum's default) each table past autovacuum's default thresholds is
 * vacuumed or analyzed as autovacuum would, with its cost delay:
 *   - vacuum: dead rows > 50 + 20 % of the table, or rows inserted since the last vacuum > 1,000 + 20 %;
 *   - analyze: rows changed since the last analyze > 50 + 10 %.
 * Its backend is not named as the bench's own, so its CPU counts as the database's, as autovacuum's would.
 */
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';

export const AUTOVACUUM_NAPTIME_MS = 60_000;

export interface AutovacuumStandIn {
  /** Tables vacuumed and analyzed so far, in order ("vacuum analyze webhook_outbox", …). */
  done: string[];
  /**
   * A pass now, as autovacuum's next one would: a bench calls it after its warm-up, so the measured run starts with
   * the statistics a running installation has, not a fresh database's (tables read as empty: every lookup planned for
   * a few rows).
   */
  passNow(): Promise<void>;
  stop(): Promise<void>;
}

const DUE = `select t.relname::text as table,
     n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
       or n_ins_since_vacuum > 1000 + 0.2 * greatest(c.reltuples, 0) as vacuum,
     n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0) as analyze
   from pg_stat_user_tables t join pg_class c on c.oid = t.relid
   where t.schemaname = current_schema()`;

/** Null when the server runs autovacuum itself (nothing to stand in for). */
export async function startAutovacuumStandIn(
  url: string,
  log: (m: string) => void,
  naptimeMs = AUTOVACUUM_NAPTIME_MS,
): Promise<AutovacuumStandIn | null> {
  const named = new URL(url);
  named.searchParams.set('application_name', 'billing-bench-autovacuum');
  const db: Knex = createKnex(named.toString(), { max: 1 });
  if ((await db.raw('show autovacuum')).rows[0].autovacuum === 'on') {
    await db.destroy();
    return null;
  }
  log(
    `the server runs without autovacuum: the bench vacuums and analyzes as autovacuum would, every ${naptimeMs / 1000} s`,
  );
  const done: string[] = [];
  let stopped = false;
  let pass: Promise<void> = Promise.resolve();
  const runPass = async () => {
    // Autovacuum's cost delay (autovacuum_vacuum_cost_delay 2 ms, cost limit 200): it yields as it goes.
    await db.raw("set vacuum_cost_delay = '2ms'; set vacuum_cost_limit = 200");
    const due: { table: string; vacuum: boolean; analyze: boolean }[] = (await db.raw(DUE)).rows;
    for (const t of due) {
      if (stopped) return;
      if (!t.vacuum && !t.analyze) continue;
      const what = t.vacuum ? 'vacuum analyze' : 'analyze';
      await db.raw(`${what} "${t.table.replace(/"/g, '""')}"`);
      done.push(`${what} ${t.table}`);
    }
  };
  const next = () => (pass = pass.then(runPass).catch((e) => log(`autovacuum stand-in: ${(e as Error).message}`)));
  const timer = setInterval(next, naptimeMs);
  return {
    done,
    passNow: () => next(),
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await pass;
      await db.destroy();
    },
  };
}

/** The line a report prints under its machine line: who kept the statistics during the run. */
export function statisticsLine(a: AutovacuumStandIn | null): string {
  if (a)
    return `Statistics: the server runs without autovacuum (its CI configuration); the bench vacuumed and analyzed as autovacuum's defaults would (bench/lib/autovacuum-stand-in.ts): ${a.done.length ? counted(a.done) : 'nothing was due'}.`;
  return process.env.BENCH_AUTOVACUUM === '0'
    ? 'Statistics: none kept (BENCH_AUTOVACUUM=0 on a server without autovacuum): the comparison.'
    : "Statistics: the server's autovacuum.";
}

/** "analyze webhook_deliveries ×2, vacuum analyze webhook_outbox" */
function counted(done: string[]): string {
  const n = new Map<string, number>();
  for (const d of done) n.set(d, (n.get(d) ?? 0) + 1);
  return [...n].map(([d, k]) => (k > 1 ? `${d} ×${k}` : d)).join(', ');
}
