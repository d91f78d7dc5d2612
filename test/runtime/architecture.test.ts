import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALLOWED, checkImports, TYPE_ONLY } from '../../scripts/check-imports';

const DOC = fs.readFileSync(path.join(__dirname, '../../docs/architecture.md'), 'utf8');

/** The "may import" column of docs/architecture.md's folder table: run-time and type-only lists. */
function documentedRules(): Map<string, { run: string[]; types: string[] }> {
  const rules = new Map<string, { run: string[]; types: string[] }>();
  for (const line of DOC.split('\n')) {
    const m = /^\| `([a-z]+)\/` +\|.*\| ([^|]+?) *\|$/.exec(line);
    if (!m) continue;
    const [folder, cell] = [m[1], m[2].trim()];
    const [runPart, typePart = ''] = cell.split('(types from');
    const names = (s: string) => [...s.matchAll(/`([a-z]+)`/g)].map((x) => x[1]).sort();
    rules.set(folder, { run: names(runPart), types: names(typePart) });
  }
  return rules;
}

describe('the folder rules', () => {
  it('hold for the code: no forbidden import, no import cycle, no SQL outside db/', () => {
    expect(checkImports()).toEqual([]);
  });

  it('are the ones docs/architecture.md states, folder by folder', () => {
    const documented = documentedRules();
    for (const [folder, allowed] of Object.entries(ALLOWED)) {
      if (folder === 'scripts') continue; // documented as a list too, checked below
      expect([folder, documented.get(folder)]).toEqual([
        folder,
        { run: [...allowed].sort(), types: [...(TYPE_ONLY[folder] ?? [])].sort() },
      ]);
    }
    expect(documented.get('scripts')?.run).toEqual([...ALLOWED.scripts].sort());
  });
});
