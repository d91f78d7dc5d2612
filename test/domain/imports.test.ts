import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';

/**
 * The layering rules, checked on the source: domain/ is pure (no I/O, so workflows can import
 * it), and workflows reach the outside world only through activities.
 */

function tsFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT_DIR, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT_DIR, path.join(e.parentPath, e.name)));
}

/** Every module specifier a file imports or re-exports (type-only ones too), resolved against the repo root when relative. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(fs.readFileSync(path.join(ROOT_DIR, file), 'utf8'), true, true);
  return info.importedFiles.map(({ fileName }) =>
    fileName.startsWith('.') ? path.relative(ROOT_DIR, path.resolve(ROOT_DIR, path.dirname(file), fileName)) : fileName,
  );
}

describe('domain/ is pure', () => {
  const files = tsFiles('domain');

  it('finds the domain modules', () => {
    // The scan below proves nothing if it reads nothing.
    expect(files).toEqual(
      expect.arrayContaining(['domain/providers.ts', 'domain/events.ts', 'domain/connection-choice.ts']),
    );
  });

  // Packages a pure rule may use: validation schemas, which do no I/O and run inside workflows.
  const PURE_PACKAGES = ['zod'];

  it('imports only other domain modules and pure validation (no node:*, no I/O package, no other layer)', () => {
    const offending = files.flatMap((f) =>
      importsOf(f)
        .filter((m) => !m.startsWith('domain/') && !PURE_PACKAGES.includes(m))
        .map((m) => `${f} → ${m}`),
    );
    expect(offending).toEqual([]);
  });

  it('the scan catches what it forbids', () => {
    // Guard against a parser that silently returns nothing.
    const info = ts.preProcessFile(
      `import crypto from 'node:crypto';\nexport { x } from '../db/knex';\nimport type { Y } from 'zod';`,
      true,
      true,
    );
    expect(info.importedFiles.map((i) => i.fileName)).toEqual(['node:crypto', '../db/knex', 'zod']);
  });
});

describe('workflows/ reach the world only through activities', () => {
  const FORBIDDEN = [/^db\//, /^api\//, /^runtime\//, /^providers\/(?!types$)/, /^node:/];

  it('imports nothing from db/, api/, runtime/ or providers/ (except providers/types)', () => {
    const files = tsFiles('workflows');
    expect(files.length).toBeGreaterThan(0);
    const offending = files.flatMap((f) =>
      importsOf(f)
        .filter((m) => FORBIDDEN.some((re) => re.test(m)))
        .map((m) => `${f} → ${m}`),
    );
    expect(offending).toEqual([]);
  });
});
