import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { WORKFLOW_PRELOAD_MODULES } from '../../temporal/worker';

/**
 * The workflow code is preloaded (temporal/worker.ts, WORKFLOW_PRELOAD_MODULES): every workflow on
 * a worker thread shares one instance of each module reachable from workflows/index.ts. A
 * module-level variable or collection there would carry one workflow's state into another's
 * (docs/temporal.md, "The workflow thread's CPU"). This reads those modules, following their
 * relative imports, and refuses a top-level `let`/`var` or a top-level Map, Set or array made empty
 * to be filled.
 */
function reachable(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const st of src.statements) {
      const spec =
        (ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) &&
        st.moduleSpecifier &&
        ts.isStringLiteral(st.moduleSpecifier) &&
        !(ts.isImportDeclaration(st) && st.importClause?.isTypeOnly) &&
        !(ts.isExportDeclaration(st) && st.isTypeOnly)
          ? st.moduleSpecifier.text
          : null;
      if (!spec?.startsWith('.')) continue;
      const base = path.resolve(path.dirname(file), spec);
      const next = [`${base}.ts`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f));
      if (next) visit(next);
    }
  };
  visit(entry);
  return [...seen];
}

function moduleState(file: string): string[] {
  const src = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const st of src.statements) {
    if (!ts.isVariableStatement(st)) continue;
    const kind = st.declarationList.flags & ts.NodeFlags.Const ? 'const' : 'let/var';
    for (const d of st.declarationList.declarations) {
      const name = d.name.getText(src);
      const init = d.initializer;
      const fillable =
        init &&
        ((ts.isNewExpression(init) && /^(Map|Set|WeakMap|WeakSet)$/.test(init.expression.getText(src))) ||
          (ts.isArrayLiteralExpression(init) && init.elements.length === 0));
      if (kind === 'let/var' || fillable) found.push(`${path.basename(file)}: ${name}`);
    }
  }
  return found;
}

describe('the preloaded workflow code', () => {
  it('keeps no state at module level', () => {
    const files = WORKFLOW_PRELOAD_MODULES.flatMap(reachable);
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap(moduleState)).toEqual([]);
  });

  it('is what this check reads: a module-level let is found', () => {
    const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'module-state-')), 'm.ts');
    try {
      fs.writeFileSync(tmp, 'let runs = 0;\nconst seen = new Map();\nexport const f = () => ++runs + seen.size;\n');
      expect(moduleState(tmp)).toEqual(['m.ts: runs', 'm.ts: seen']);
    } finally {
      fs.rmSync(path.dirname(tmp), { recursive: true, force: true });
    }
  });
});
