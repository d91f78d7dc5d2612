import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';
import { testFilesByTier, tierOf } from '../tiers';

/**
 * Each test file's tier comes from what it uses (test/tiers.ts), not from its name or folder:
 * the suite's own files land where their needs put them, a need behind a file-local helper
 * counts, and a `// test-tier:` line can raise a file's tier but never lower it.
 */
describe('test tiers by need', () => {
  const fixture = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-tiers-'));
  afterAll(() => fs.rmSync(fixture, { recursive: true, force: true }));
  const write = (rel: string, text: string) => {
    const p = path.join(fixture, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
    return p;
  };

  it('puts the suite’s files where their needs are, each in one tier', () => {
    const tiers = testFilesByTier(ROOT_DIR);
    expect(tiers.pure).toContain('test/domain/lifecycle.test.ts');
    expect(tiers.pure).toContain('test/runtime/tiers.unit.test.ts');
    // A listener of its own and a test services object: no Temporal, but the database.
    expect(tiers.database).toContain('test/db/rls.test.ts');
    expect(tiers.database).toContain('test/api/slow-clients.test.ts');
    expect(tiers.database).toContain('test/e2e/auth.test.ts');
    expect(tiers.engine).toContain('test/temporal/grant-expiry.test.ts');
    expect(tiers.engine).toContain('test/start/npm-start.test.ts');
    // One in-process emulator is the engine tier too (docs/testing.md).
    expect(tiers.engine).toContain('test/providers/psp_b.test.ts');
    const all = [...tiers.pure, ...tiers.database, ...tiers.engine];
    expect(new Set(all).size).toBe(all.length);
    const onDisk = (fs.readdirSync(path.join(ROOT_DIR, 'test'), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => path.join('test', f));
    expect(all.sort()).toEqual(onDisk.sort());
  });

  it('follows a file’s own helper modules, and a declared tier only raises', () => {
    const root = fixture;
    // The calls the fixtures make, spelled apart here so that this file itself stays pure.
    const [worker, db, api] = ['startTestWorker', 'testDb', 'startApi'].map((name) => `${name}(`);
    write('test/helpers/db.ts', `export function ${db}) {}\n`);
    write('test/x/stack.ts', `export const s = () => ${worker}{});\n`);
    const viaLocal = write('test/x/a.test.ts', "import { s } from './stack';\nit('a', () => s());\n");
    const plain = write('test/x/b.test.ts', `import { testDb } from '../helpers/db';\nit('b', () => ${db}));\n`);
    const raised = write(
      'test/x/c.test.ts',
      `// test-tier: engine (POST /v1/sync starts a workflow)\nit('c', () => ${db}));\n`,
    );
    const lowered = write('test/x/d.test.ts', `// test-tier: pure\nit('d', () => ${api}));\n`);
    const nothing = write('test/x/e.test.ts', "it('e', () => expect(1).toBe(1));\n");
    expect(tierOf(viaLocal, root)).toBe('engine');
    expect(tierOf(plain, root)).toBe('database');
    expect(tierOf(raised, root)).toBe('engine');
    expect(tierOf(lowered, root)).toBe('database');
    expect(tierOf(nothing, root)).toBe('pure');
  });
});
