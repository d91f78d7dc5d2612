import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';
import { testDb } from '../helpers/db';

/** docs/data-layer.md's "Logic in triggers" table: per trigger, its table, its function and the tests named. */
function documentedTriggers(): { trigger: string; table: string; fn: string; tests: string[] }[] {
  const doc = fs.readFileSync(path.join(ROOT_DIR, 'docs/data-layer.md'), 'utf8');
  const section = doc.split('\n## Logic in triggers\n')[1]?.split('\n## ')[0] ?? '';
  const ticks = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  const out: { trigger: string; table: string; fn: string; tests: string[] }[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | triggers | on | function (migration) | what it does | tested in |
    if (cells.length !== 7 || !cells[1].startsWith('`')) continue;
    const [, triggers, table, fn, , tests] = cells;
    for (const trigger of ticks(triggers))
      out.push({ trigger, table: ticks(table)[0], fn: ticks(fn)[0], tests: ticks(tests) });
  }
  return out;
}

/**
 * Logic that lives in triggers is listed where a reader of the data layer looks
 * (docs/data-layer.md, "Logic in triggers"), each with where it is tested: the list is compared
 * with the migrated database's own triggers, so a new trigger cannot go unlisted.
 */
describe('the triggers of the schema', () => {
  it('are exactly those docs/data-layer.md lists, on the table and with the function it names', async () => {
    const { rows } = await testDb().raw(
      `select t.tgname as trigger, c.relname as "table", p.proname as fn
         from pg_trigger t
         join pg_class c on c.oid = t.tgrelid
         join pg_namespace n on n.oid = c.relnamespace
         join pg_proc p on p.oid = t.tgfoid
        where not t.tgisinternal and n.nspname = current_schema()
        order by 1`,
    );
    expect(rows.length).toBeGreaterThan(20);
    const documented = documentedTriggers();
    expect(
      documented
        .map(({ trigger, table, fn }) => ({ trigger, table, fn }))
        .sort((a, b) => a.trigger.localeCompare(b.trigger)),
    ).toEqual(rows);
  });

  it('each with at least one test, and every test named exists', () => {
    const documented = documentedTriggers();
    expect(documented.length).toBeGreaterThan(20);
    for (const { trigger, tests } of documented) {
      expect(tests.length, trigger).toBeGreaterThan(0);
      for (const t of tests) expect(fs.existsSync(path.join(ROOT_DIR, t)), `${trigger}: ${t}`).toBe(true);
    }
  });
});
