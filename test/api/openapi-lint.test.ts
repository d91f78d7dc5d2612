import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../api/openapi';
import { ROOT_DIR } from '../../runtime/config';

/**
 * The OpenAPI document lints clean under an independent, maintained linter (Redocly CLI, its
 * recommended ruleset plus redocly.yaml). Runs offline: no telemetry, no update check.
 */
describe('OpenAPI lint', () => {
  it('the generated document has no error and no warning under redocly lint (recommended)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(buildOpenApi(), null, 2));
    try {
      const cli = path.join(ROOT_DIR, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [cli, 'lint', file, '--config', path.join(ROOT_DIR, 'redocly.yaml'), '--format', 'json'],
        {
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
          maxBuffer: 16 * 1024 * 1024,
        },
      ).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
      const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
      const problems = (report.problems as { ruleId: string; message: string; location: { pointer: string }[] }[]).map(
        (p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`,
      );
      expect(problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
