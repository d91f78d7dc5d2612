/**
 * Writes operations/declared.ts: every `export const <x> = defineOperation(` in
 * `operations/<resource>/*.ts`, imported and listed, so a new operation file is in the registry
 * (REST, OpenAPI, tools, the pages' gate) with no list edited by hand. A generated module rather
 * than a scan at start: the table keeps its static types, and tsx, vitest and the compiled
 * `dist/` build all load the same plain imports.
 *
 * `npm test` and `npm run build` run it first; `--check` (in `npm run checks`) fails when the
 * committed file is not what it would write. It also refuses an operation whose name's resource
 * is not its folder (`grants.create` lives in `operations/grants/`).
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const OPERATIONS_DIR = path.join(ROOT, 'operations');
export const DECLARED_FILE = path.join(OPERATIONS_DIR, 'declared.ts');

const DECLARATION = /^export const (\w+) = defineOperation\(\{\s*\n\s*name: '([a-z_]+)\.[a-z_]+'/gm;

interface Found {
  exportName: string;
  resource: string;
  importPath: string;
}

export function declarations(): { found: Found[]; problems: string[] } {
  const found: Found[] = [];
  const problems: string[] = [];
  const folders = fs
    .readdirSync(OPERATIONS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  for (const folder of folders) {
    const files = fs
      .readdirSync(path.join(OPERATIONS_DIR, folder))
      .filter((f) => f.endsWith('.ts'))
      .sort();
    for (const file of files) {
      const text = fs.readFileSync(path.join(OPERATIONS_DIR, folder, file), 'utf8');
      for (const m of text.matchAll(DECLARATION)) {
        const [, exportName, resource] = m;
        if (resource.replace(/_/g, '-') !== folder) {
          problems.push(
            `operations/${folder}/${file}: ${exportName} is a ${resource} operation; it belongs in operations/${resource.replace(/_/g, '-')}/`,
          );
        }
        found.push({ exportName, resource, importPath: `./${folder}/${file.replace(/\.ts$/, '')}` });
      }
    }
  }
  return { found, problems };
}

export function declaredModule(found: Found[]): string {
  return [
    '// Written by scripts/operations-table.ts from every `defineOperation` in operations/<resource>/; do not edit.',
    '// `npm test` and `npm run build` rewrite it; `npm run checks` fails when it is stale.',
    "import type { Operation } from './types';",
    ...found.map((f) => `import { ${f.exportName} } from '${f.importPath}';`),
    '',
    '/** The declared operations, by resource folder and file name. */',
    'export const DECLARED: Operation[] = [',
    ...found.map((f) => `  ${f.exportName},`),
    '] as Operation[];',
    '',
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'scripts', 'operations-table.ts')) {
  const { found, problems } = declarations();
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
  const text = declaredModule(found);
  const current = fs.existsSync(DECLARED_FILE) ? fs.readFileSync(DECLARED_FILE, 'utf8') : '';
  if (process.argv.includes('--check')) {
    if (current !== text) {
      console.error('operations/declared.ts is stale: run `npx tsx scripts/operations-table.ts`');
      process.exit(1);
    }
  } else if (current !== text) {
    fs.writeFileSync(DECLARED_FILE, text);
    console.log(`wrote operations/declared.ts (${found.length} operations)`);
  }
}
