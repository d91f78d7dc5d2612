import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';
import { tsconfig, typeAware } from '../../scripts/types-and-lint';

const run = promisify(execFile);

/**
 * `npm run checks` runs the type check and ESLint as two processes (scripts/types-and-lint.ts):
 * the type check with the type-aware rules on its program, and the other rules without one. What
 * they report together must be what `tsc --noEmit && eslint .` reports.
 */
describe('the type check and ESLint, split in two', () => {
  const eslint = new ESLint({ cwd: ROOT_DIR });

  it('every TypeScript file ESLint lints is in the type-checked program, so none loses the type-aware rules', async () => {
    const tracked = execFileSync('git', ['ls-files', '*.ts'], { cwd: ROOT_DIR, encoding: 'utf8' }).split('\n');
    const linted = [];
    for (const f of tracked.filter((f) => f && !f.endsWith('.d.ts')))
      if (!(await eslint.isPathIgnored(path.join(ROOT_DIR, f)))) linted.push(f);
    const inProgram = new Set(tsconfig().fileNames.map((f) => path.relative(ROOT_DIR, f)));
    expect(linted.length).toBeGreaterThan(500);
    expect(linted.filter((f) => !inProgram.has(f))).toEqual([]);
  });

  it("each rule the config turns on runs in exactly one half: the type-aware ones (typescript-eslint's own list) with the program", async () => {
    // typescript-eslint's `disableTypeChecked` turns off every rule that needs types: an independent list.
    const needsTypes = new Set(Object.keys(tseslint.configs.disableTypeChecked.rules ?? {}));
    const config = await eslint.calculateConfigForFile(path.join(ROOT_DIR, 'api/main.ts'));
    const on = Object.entries(config.rules as Record<string, unknown[]>)
      .filter(([, v]) => v[0] !== 0 && v[0] !== 'off')
      .map(([id]) => id);
    expect(on.length).toBeGreaterThan(20);
    for (const id of on) expect(typeAware(id), id).toBe(needsTypes.has(id));
    expect(on.filter(typeAware).sort()).toEqual([
      '@typescript-eslint/no-floating-promises',
      '@typescript-eslint/no-misused-promises',
    ]);
  });

  it('a type error and a floating promise fail the types half, an unused variable the syntax half; each only its own', async () => {
    const dir = fs.mkdtempSync(path.join(ROOT_DIR, 'test', '.lint-probe-'));
    const file = path.join(dir, 'probe.ts');
    fs.writeFileSync(
      file,
      [
        'async function later(): Promise<void> {}',
        'later();',
        "export const n: number = 'text';",
        'const unused = 1;',
        '',
      ].join('\n'),
    );
    const half = (mode: string) =>
      run(process.execPath, ['--import', 'tsx', 'scripts/types-and-lint.ts', mode, path.relative(ROOT_DIR, file)], {
        cwd: ROOT_DIR,
      }).then(
        (r) => ({ code: 0, out: r.stdout }),
        (e) => ({ code: e.code as number, out: String(e.stdout) }),
      );
    try {
      const [types, syntax] = await Promise.all([half('types'), half('syntax')]);
      expect(types.code).toBe(1);
      expect(types.out).toContain('TS2322');
      expect(types.out).toContain('no-floating-promises');
      expect(types.out).not.toContain('no-unused-vars');
      expect(syntax.code).toBe(1);
      expect(syntax.out).toContain('no-unused-vars');
      expect(syntax.out).not.toContain('no-floating-promises');
      expect(syntax.out).not.toContain('TS2322');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
