import path from 'node:path';
import ts from 'typescript';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { ROOT_DIR as ROOT } from '../runtime/config';
import { isEntryPoint } from './entry';
import { readTsconfig } from './tsconfig';

/**
 * The type check and ESLint (eslint.config.js, unchanged), as `npm run checks` runs them: in two
 * processes that share the work instead of repeating it. ESLint's type-aware rules need the whole
 * program type-checked, which `tsc --noEmit` does as well: run apart, the two built and checked it
 * twice (docs/testing.md, "The checks: one program for the type check and the type-aware rules").
 *
 *   tsx scripts/types-and-lint.ts types   the program of tsconfig.json, checked (what
 *                                         `tsc --noEmit -p tsconfig.json` reports), then ESLint's
 *                                         type-aware rules over that same program
 *   tsx scripts/types-and-lint.ts syntax  ESLint's other rules, on every file, with no program
 *
 * Files named after the mode take the place of the whole tree (the program then holds them and what
 * they import).
 *
 * Together they report what `tsc --noEmit -p tsconfig.json && eslint .` reports: every TypeScript
 * file ESLint lints is in tsconfig.json's program (test/runtime/types-and-lint.unit.test.ts), and
 * the few .js/.mjs files get no type-aware rule either way. Exit 1 on any problem.
 */
/** typescript-eslint's rules say in their metadata whether they need the program's types. */
const pluginRules = (tseslint.plugin as unknown as { rules: Record<string, { meta: { docs?: object } }> }).rules;
export const typeAware = (ruleId: string): boolean => {
  const prefix = '@typescript-eslint/';
  const docs = ruleId.startsWith(prefix) ? pluginRules[ruleId.slice(prefix.length)]?.meta.docs : undefined;
  return Boolean(docs && 'requiresTypeChecking' in docs && docs.requiresTypeChecking);
};

/** tsconfig.json's files and options, as tsc reads them. */
export const tsconfig = (): ts.ParsedCommandLine => readTsconfig(ROOT, 'tsconfig.json');

async function run(mode: 'types' | 'syntax', files: string[]): Promise<boolean> {
  let ok = true;
  let targets = files.length ? files : ['.'];
  let parserOptions: Record<string, unknown> = { projectService: false };
  if (mode === 'types') {
    const { fileNames, options } = tsconfig();
    const rootNames = files.length ? files.map((f) => path.resolve(f)) : fileNames;
    const program = ts.createProgram({ rootNames, options });
    const diagnostics = ts.getPreEmitDiagnostics(program);
    if (diagnostics.length) {
      ok = false;
      const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
      process.stdout.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, host) + '\n');
    }
    targets = rootNames.filter((f) => !f.endsWith('.d.ts')).map((f) => path.relative(ROOT, f));
    parserOptions = { projectService: false, programs: [program] };
  }
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfig: { languageOptions: { parserOptions } },
    ruleFilter: ({ ruleId }) => (mode === 'types') === typeAware(ruleId),
    // A named file the config ignores is skipped, as `eslint .` skips it.
    warnIgnored: false,
  });
  const results = await eslint.lintFiles(targets);
  const output = await (await eslint.loadFormatter('stylish')).format(results);
  if (output) process.stdout.write(output);
  return ok && results.every((r) => r.errorCount === 0 && r.fatalErrorCount === 0);
}

if (isEntryPoint(import.meta.url)) {
  const mode = process.argv[2];
  if (mode !== 'types' && mode !== 'syntax') {
    process.stderr.write('usage: tsx scripts/types-and-lint.ts types|syntax [file…]\n');
    process.exit(2);
  }
  process.exit((await run(mode, process.argv.slice(3))) ? 0 : 1);
}
