import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(__dirname, '../..');
const readJson = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));

/**
 * emulators/ is its own package (docs/emulators.md, "The package") but not an npm workspace: the
 * root install is what provides its dependencies, locally, in CI and in emulators/Dockerfile. So
 * each one it names must be pinned to the same version at the root, or the package would run on a
 * version it never asked for. knip holds its imports to its own package.json.
 */
describe('the emulators package', () => {
  const pkg = readJson('emulators/package.json');
  const root = readJson('package.json');

  it('is private, an ES module package, and started by npm run emulators', () => {
    expect(pkg).toMatchObject({ name: '@billing-service/emulators', private: true, type: 'module' });
    expect(pkg.scripts.start).toBe('tsx main.ts');
    expect(root.scripts.emulators).toBe('npm run -s --prefix emulators start');
    expect(root.workspaces).toBeUndefined();
  });

  it('names only dependencies the root pins, at the root version', () => {
    const rootPins: Record<string, string> = { ...root.dependencies, ...root.devDependencies };
    const own: Record<string, string> = { ...pkg.dependencies, ...pkg.devDependencies };
    expect(Object.keys(own).length).toBeGreaterThan(0);
    for (const [name, version] of Object.entries(own)) {
      expect(version, name).toMatch(/^\d+\.\d+\.\d+$/);
      expect([name, rootPins[name]]).toEqual([name, version]);
    }
  });
});
