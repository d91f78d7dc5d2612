import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ROOT_DIR } from '../runtime/config';
import { WORKFLOW_BUNDLES, workflowBundleOptions } from '../temporal/worker';
import { writeTypes } from './openapi-types';
import { readTsconfig } from './tsconfig';

/**
 * `npm run build`: what production runs, compiled once. The emulators are not in it: they are
 * their own package, run from source with tsx (emulators/package.json, emulators/Dockerfile).
 *
 * 1. tsc (tsconfig.build.json) to dist/, through the compiler API so one transformer can give
 *    relative imports the `.js` (or `/index.js`) that Node's ESM loader requires: the sources
 *    import without extensions (moduleResolution "Bundler"), which tsx and vitest accept and
 *    `node` does not. Nothing else is changed in the emitted code.
 * 2. The workflow code bundled once (bundleWorkflowCode, as Temporal's production sample does)
 *    into dist/workflow-bundle.js, and again with the tracing interceptors into
 *    dist/workflow-bundle-traced.js: the worker loads one instead of running webpack at every
 *    start (temporal/worker.ts).
 * 3. The typed client's types generated from the OpenAPI document (scripts/openapi-types.ts):
 *    generated, not committed, so a clean clone's build leaves a tree that type-checks whole.
 */
const DIST = path.join(ROOT_DIR, 'dist');

function resolvedSpecifier(fromFile: string, spec: string): string {
  if (!spec.startsWith('./') && !spec.startsWith('../')) return spec;
  if (/\.(js|mjs|cjs|json)$/.test(spec)) return spec;
  const base = path.resolve(path.dirname(fromFile), spec.replace(/\.ts$/, ''));
  if (fs.existsSync(`${base}.ts`)) return `${spec.replace(/\.ts$/, '')}.js`;
  if (fs.existsSync(path.join(base, 'index.ts'))) return `${spec.replace(/\/$/, '')}/index.js`;
  throw new Error(`${path.relative(ROOT_DIR, fromFile)}: cannot resolve "${spec}" for the compiled build`);
}

const addJsExtensions: ts.TransformerFactory<ts.SourceFile> = (context) => (sourceFile) => {
  const f = context.factory;
  const rewrite = (lit: ts.Expression) =>
    ts.isStringLiteral(lit) ? f.createStringLiteral(resolvedSpecifier(sourceFile.fileName, lit.text)) : lit;
  const visit = (node: ts.Node): ts.Node => {
    if (ts.isImportDeclaration(node)) {
      return f.updateImportDeclaration(
        node,
        node.modifiers,
        node.importClause,
        rewrite(node.moduleSpecifier),
        node.attributes,
      );
    }
    if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      return f.updateExportDeclaration(
        node,
        node.modifiers,
        node.isTypeOnly,
        node.exportClause,
        rewrite(node.moduleSpecifier),
        node.attributes,
      );
    }
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length > 0
    ) {
      return f.updateCallExpression(node, node.expression, node.typeArguments, [
        rewrite(node.arguments[0]),
        ...node.arguments.slice(1),
      ]);
    }
    return ts.visitEachChild(node, visit, context);
  };
  return ts.visitEachChild(sourceFile, visit, context);
};

function compile(typeCheck: boolean): void {
  const parsed = readTsconfig(ROOT_DIR, 'tsconfig.build.json');
  if (!typeCheck) return transpileEach(parsed);
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
  const result = program.emit(undefined, undefined, undefined, false, { after: [addJsExtensions] });
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (diagnostics.length) {
    const host = {
      getCanonicalFileName: (f: string) => f,
      getCurrentDirectory: () => ROOT_DIR,
      getNewLine: () => '\n',
    };
    throw new Error(ts.formatDiagnostics(diagnostics, host));
  }
}

/**
 * `--no-type-check`: the same files emitted one by one (ts.transpileModule, the same output under
 * isolatedModules, which tsconfig.json sets), found by following the entries' relative imports,
 * without building and checking the whole program, which is most of the build's CPU (76 → 30 s,
 * measured on a loaded 2-core host). For a caller that has just type-checked these sources:
 * `npm test` runs the checks before test/ops/compiled.test.ts builds.
 */
function transpileEach(parsed: ts.ParsedCommandLine): void {
  const files = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    // JSON a module imports: copied below, as tsc copies it.
    if (!file.endsWith('.ts')) return;
    for (const { fileName: spec } of ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!spec.startsWith('./') && !spec.startsWith('../')) continue;
      visit(path.resolve(path.dirname(file), resolvedSpecifier(file, spec)).replace(/\.js$/, '.ts'));
    }
  };
  for (const entry of parsed.fileNames) visit(path.resolve(entry));
  for (const file of files) {
    const out = path.join(DIST, path.relative(ROOT_DIR, file)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    if (!file.endsWith('.ts')) {
      fs.copyFileSync(file, out);
      continue;
    }
    const { outputText, sourceMapText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      compilerOptions: parsed.options,
      fileName: file,
      transformers: { after: [addJsExtensions] },
    });
    fs.writeFileSync(out, outputText);
    if (sourceMapText) {
      // As tsc writes it: the source named relative to the emitted file.
      const map = { ...JSON.parse(sourceMapText), sources: [path.relative(path.dirname(out), file)] };
      fs.writeFileSync(`${out}.map`, JSON.stringify(map));
    }
  }
}

async function bundleWorkflows(): Promise<void> {
  const plain = await bundleWorkflowCode(workflowBundleOptions(false));
  fs.writeFileSync(path.join(DIST, WORKFLOW_BUNDLES.plain), plain.code);
  const traced = await bundleWorkflowCode(workflowBundleOptions(true));
  fs.writeFileSync(path.join(DIST, WORKFLOW_BUNDLES.traced), traced.code);
}

const started = Date.now();
fs.rmSync(DIST, { recursive: true, force: true });
compile(!process.argv.includes('--no-type-check'));
// Node reads dist/ as ES modules like the sources (package.json "type": "module").
await bundleWorkflows();
await writeTypes();
process.stdout.write(
  `built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s: node dist/api/main.js, node dist/temporal/worker-main.js, node dist/temporal/outbound-worker-main.js, node dist/db/migrate-main.js\n`,
);
