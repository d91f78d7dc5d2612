import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';
import { createKnex, withDatabase } from '../../db/knex';
import { dropDatabases } from '../../temporal/postgres-server';
import { findTemporalServerBinaries } from '../../temporal/server-binaries';

const compose = fs.readFileSync(path.join(ROOT_DIR, 'docker-compose.yml'), 'utf8');

/** One service's block of docker-compose.yml (from `  name:` to the next service). */
function service(name: string): string {
  const start = compose.indexOf(`\n  ${name}:\n`);
  if (start < 0) return '';
  const rest = compose.slice(start + 1);
  const next = rest.slice(1).search(/\n {2}[\w-]+:\n/);
  return next < 0 ? rest : rest.slice(0, next + 1);
}

const binaries = (() => {
  try {
    return findTemporalServerBinaries({ build: false });
  } catch {
    return undefined;
  }
})();

describe('docker-compose runs Temporal as a production installation does (issue #22)', () => {
  it('the server image, not auto-setup; the schema by temporal-sql-tool first; the app after the namespace', () => {
    expect(compose).not.toMatch(/temporalio\/auto-setup/);
    expect(service('temporal')).toMatch(/image: temporalio\/server:1\.29\.1\n/);
    expect(service('temporal')).toMatch(/DB: postgres12\n/);
    expect(service('temporal')).toMatch(/NUM_HISTORY_SHARDS: \d+\n/);
    expect(service('temporal')).toMatch(/temporal-schema: \{ condition: service_completed_successfully \}/);
    expect(service('temporal-schema')).toMatch(/image: temporalio\/admin-tools:1\.29\.1-/);
    expect(service('temporal-namespace')).toMatch(/temporal operator namespace create/);
    for (const app of ['worker', 'api'])
      expect(service(app), app).toMatch(/temporal-namespace: \{ condition: service_completed_successfully \}/);
  });

  // The job's own shell lines, run against this run's Postgres with the same tool version.
  it.skipIf(!binaries)(
    'its schema job creates and upgrades both databases, and a second run changes nothing',
    async () => {
      const lines = service('temporal-schema').split('\n');
      const from = lines.findIndex((l) => l.trim() === '- |') + 1;
      const script = lines
        .slice(
          from,
          lines.findIndex((l, i) => i > from && !l.startsWith('        ')),
        )
        .map((l) => l.slice(8))
        .join('\n');
      expect(script).toMatch(/setup-schema -v 0\.0/);
      expect(script).toMatch(/update-schema/);
      const url = new URL(inject('databaseUrl'));
      const db = `temporal_compose_${crypto.randomBytes(3).toString('hex')}`;
      const local = script
        .replace(/\$\$/g, '$')
        .replace('temporal-sql-tool', binaries!.sqlTool)
        .replace(
          '--ep postgres --port 5432 --user billing --password billing',
          `--ep ${url.hostname} --port ${url.port || 5432} --user ${decodeURIComponent(url.username)} --password '${decodeURIComponent(url.password)}'`,
        )
        .replace('temporal:temporal temporal_visibility:visibility', `${db}:temporal ${db}_visibility:visibility`);
      try {
        const state = async () => {
          const out: Record<string, { version: string; steps: number }> = {};
          for (const name of [db, `${db}_visibility`]) {
            const k = createKnex(withDatabase(inject('databaseUrl'), name), { max: 1 });
            try {
              const rows = await k('schema_version').select('curr_version');
              out[name] = {
                version: rows.map((r) => r.curr_version).join(),
                steps: Number((await k('schema_update_history').count('* as n'))[0].n),
              };
            } finally {
              await k.destroy();
            }
          }
          return out;
        };
        execFileSync('sh', ['-ec', local], { stdio: ['ignore', 'ignore', 'pipe'] });
        const first = await state();
        for (const s of Object.values(first)) {
          expect(s.version).toMatch(/^1\.\d+$/);
          expect(s.steps).toBeGreaterThan(0);
        }
        // A restart of the stack runs the job again: nothing fails, nothing is applied twice.
        execFileSync('sh', ['-ec', local], { stdio: ['ignore', 'ignore', 'pipe'] });
        expect(await state()).toEqual(first);
      } finally {
        dropDatabases(binaries!, inject('databaseUrl'), db);
      }
    },
  );
});
