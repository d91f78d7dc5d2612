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
 *
 * Then it holds the scope table (domain/scopes.ts) to the operations it listed
 * (`scripts/scope-use.ts`): every scope some operation's, or saying why a key carries it.
 *
 * It writes the migrations' list the same way (`db/migrations/index.ts`, every
 * `db/migrations/NNN_name.ts` in order), so a new migration is one new file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isEntryPoint } from './entry';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const OPERATIONS_DIR = path.join(ROOT, 'operations');
export const DECLARED_FILE = path.join(OPERATIONS_DIR, 'declared.ts');
const MIGRATIONS_DIR = path.join(ROOT, 'db', 'migrations');
export const MIGRATIONS_FILE = path.join(MIGRATIONS_DIR, 'index.ts');

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

/** Every migration file (`NNN_name.ts`), oldest first: the names knex records. */
export function migrationNames(): string[] {
  return fs
    .readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.ts$/.test(f))
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();
}

export function migrationsModule(names: string[]): string {
  const local = (n: string) => `m${n.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())}`;
  return [
    '// Written by scripts/operations-table.ts from every db/migrations/NNN_name.ts; do not edit.',
    '// `npm test` and `npm run build` rewrite it; `npm run checks` fails when it is stale.',
    "import type { Knex } from 'knex';",
    ...names.map((n) => `import * as ${local(n)} from './${n}';`),
    '',
    '/** The migrations by the name knex records, oldest first (listed: tsx, vitest and bundles load the same). */',
    'export const MIGRATIONS: Record<string, Knex.Migration> = {',
    ...names.map((n) => `  '${n}': ${local(n)},`),
    '};',
    '',
  ].join('\n');
}

/** Writes (or, with `check`, compares) one generated file; answers whether it was stale. */
function generate(file: string, text: string, check: boolean): boolean {
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (current === text) return false;
  const name = path.relative(ROOT, file);
  if (check) console.error(`${name} is stale: run \`npx tsx scripts/operations-table.ts\``);
  else {
    fs.writeFileSync(file, text);
    console.log(`wrote ${name}`);
  }
  return true;
}

if (isEntryPoint(import.meta.url)) {
  const { found, problems } = declarations();
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
  const check = process.argv.includes('--check');
  const stale = [
    generate(DECLARED_FILE, declaredModule(found), check),
    generate(MIGRATIONS_FILE, migrationsModule(migrationNames()), check),
  ];
  if (check && stale.some(Boolean)) process.exit(1);
  // The scope table against the operations just listed (loaded after declared.ts is written).
  const [{ OPERATIONS }, { scopeProblems }] = await Promise.all([import('../operations'), import('./scope-use')]);
  const scopes = scopeProblems(OPERATIONS);
  if (scopes.length) {
    console.error(scopes.join('\n'));
    process.exit(1);
  }
}
