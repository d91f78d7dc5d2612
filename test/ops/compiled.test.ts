import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';
import { SERVICE_NODE_FLAGS } from '../../runtime/node-flags';
import { call } from '../helpers/api';
import { until } from '../helpers/until';
import { sample, scrape, startStack, type Stack } from './stack';
import { confirmedPremium } from '../helpers/premium';

/**
 * Production runs compiled code (issue #22): `npm run build` compiles to dist/ and bundles the
 * workflow code; `node dist/api/main.js` and `node dist/temporal/worker-main.js` — what the
 * image runs — start without a TypeScript loader, are ready, and carry a purchase from signed
 * webhooks to premium, with the worker running the prebuilt bundle. The emulators stay out of
 * dist/ and of that image (emulators/package.json).
 */
describe('the compiled build', () => {
  let stack: Stack;

  beforeAll(async () => {
    // Without the whole-program type check: npm test's checks have just made it over the same sources
    // (scripts/build.ts says why; the emitted dist/ is the same file for file).
    const build = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT_DIR, 'scripts/build.ts'), '--no-type-check'],
      {
        cwd: ROOT_DIR,
        encoding: 'utf8',
        env: { ...process.env, NODE_ENV: 'production' },
      },
    );
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
    stack = await startStack('compiled');
  }, 600_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('dist/ holds the four entry points and the workflow bundles (tracing off and on), no emulator, and nothing needs tsx', () => {
    for (const f of [
      'api/main.js',
      'temporal/worker-main.js',
      'temporal/outbound-worker-main.js',
      'db/migrate-main.js',
      'workflow-bundle.js',
      'workflow-bundle-traced.js',
    ]) {
      expect(fs.existsSync(path.join(ROOT_DIR, 'dist', f)), f).toBe(true);
    }
    // The emulators are their own package, run from source: nothing production runs pulls them in.
    expect(fs.existsSync(path.join(ROOT_DIR, 'dist/emulators'))).toBe(false);
    // Every relative import of the compiled code names a file that exists, as Node's ES-module loader requires.
    const files = fs
      .readdirSync(path.join(ROOT_DIR, 'dist'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.js') && !f.startsWith('workflow-bundle'));
    let checked = 0;
    for (const f of files) {
      const code = fs.readFileSync(path.join(ROOT_DIR, 'dist', f), 'utf8');
      for (const m of code.matchAll(/(?:from |import\()["'](\.{1,2}\/[^"']*)["']/g)) {
        expect(fs.existsSync(path.resolve(ROOT_DIR, 'dist', path.dirname(f), m[1])), `${f} imports ${m[1]}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
    // The tracing interceptors are in the traced bundle only: tracing off runs the workflows as before.
    expect(fs.readFileSync(path.join(ROOT_DIR, 'dist/workflow-bundle-traced.js'), 'utf8')).toContain(
      'OpenTelemetryInboundInterceptor',
    );
    expect(fs.readFileSync(path.join(ROOT_DIR, 'dist/workflow-bundle.js'), 'utf8')).not.toContain(
      'OpenTelemetryInboundInterceptor',
    );
  });

  it('the image builds dist/ and runs node dist/, docker-compose runs every production process compiled, and the emulators from their own image', () => {
    const dockerfile = fs.readFileSync(path.join(ROOT_DIR, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/RUN npm run build/);
    expect(dockerfile).toMatch(/COPY --from=build \/app\/dist \.\/dist/);
    // The long-running processes with the V8 flags `npm start` gives them (runtime/node-flags.ts); migrate runs once.
    const args = (entry: string, service: boolean) =>
      ['node', '--enable-source-maps', ...(service ? SERVICE_NODE_FLAGS : []), entry].map((a) => `"${a}"`).join(', ');
    expect(dockerfile).toContain(`CMD [${args('dist/api/main.js', true)}]`);
    const compose = fs.readFileSync(path.join(ROOT_DIR, 'docker-compose.yml'), 'utf8');
    expect(compose).not.toMatch(/tsx/);
    for (const [entry, service] of [
      ['dist/api/main.js', true],
      ['dist/temporal/worker-main.js', true],
      ['dist/temporal/outbound-worker-main.js', true],
      ['dist/db/migrate-main.js', false],
    ] as const) {
      expect(compose).toContain(`command: [${args(entry, service)}]`);
    }
    // Every service but the emulators builds the production image; the emulators build theirs,
    // which copies only what they import (domain/, runtime/) beside them and runs them with tsx.
    const emulators = compose.slice(compose.indexOf('\n  emulators:'), compose.indexOf('\n  worker:'));
    expect(emulators).toContain('build: { context: ., dockerfile: emulators/Dockerfile }');
    expect(emulators).not.toContain('command:');
    const emulatorImage = fs.readFileSync(path.join(ROOT_DIR, 'emulators/Dockerfile'), 'utf8');
    expect(emulatorImage.match(/^COPY \S+/gm)).toEqual([
      'COPY package.json',
      'COPY tsconfig.json',
      'COPY domain',
      'COPY runtime',
      'COPY emulators',
    ]);
    expect(emulatorImage).toMatch(/CMD \["node", "--import", "tsx", "emulators\/main\.ts"\]/);
  });

  it('the compiled api is ready and a purchase turns premium through the compiled worker', async () => {
    for (const root of [stack.apiUrl, stack.dashboardUrl]) {
      const ready = await call(root, '/readyz');
      expect(ready.body).toEqual({ status: 'ready' });
    }
    // What each check found is on the loopback metrics listener.
    expect((await call(`http://127.0.0.1:${stack.apiMetricsPort}`, '/readyz')).body).toEqual({
      status: 'ready',
      checks: { postgres: 'ok', temporal: 'ok', outbox: 'ok' },
    });
    const checkout = await stack.checkout('compiled_user');
    expect(checkout.events.map((e) => e.status)).toEqual([200, 200, 200]);
    const premium = await until(
      'premium',
      () => call(stack.apiUrl, '/v1/sdk/subscribers/compiled_user', stack.publishableKey),
      (r) => confirmedPremium(r.body),
      60_000,
    );
    expect(premium.body.entitlements).toEqual([expect.objectContaining({ state: 'active' })]);
    const worker = await until(
      'the worker counted it',
      () => scrape(stack.workerMetricsPort),
      (s) => (sample(s, 'billing_entitlement_writes_total', { state: 'active' }) ?? 0) >= 1,
    );
    expect(worker).toMatch(/^temporal_\w+/m);
    // The compiled outbound worker is up beside it: its worker polls (the SDK's metrics are served).
    // One scrape may miss them on a loaded machine (the SDK's endpoint answers within 2 s or the
    // rest is served alone), so this waits for a scrape that carries them.
    const outbound = await until(
      'the outbound worker serves the SDK metrics',
      () => scrape(stack.outboundWorkerMetricsPort!),
      (s) => /^temporal_\w+/m.test(s),
    );
    expect(outbound).toMatch(/^temporal_\w+/m);
    // The prebuilt bundle was loaded: the worker never ran the bundler at start.
    expect(stack.workerStderr()).not.toMatch(/Workflow bundle created/);
    expect(stack.workerStderr()).not.toMatch(/workflowsPath|webpack/i);
  });
});
