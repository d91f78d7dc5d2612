import fs from 'node:fs';
import path from 'node:path';

/**
 * Every test file runs in one of three tiers, by what it needs (docs/testing.md, "Three tiers"):
 * - `pure`: no service at all (rules, signatures, parsers, a listener of its own);
 * - `database`: the run's Postgres database, nothing else (no Temporal server, no workflow bundle);
 * - `engine`: a Temporal server, the run's workflow bundle, an emulator or `npm start`.
 * Only the database and engine tiers' global setups start anything (test/global-setup.ts,
 * test/engine-setup.ts), so a run of pure or database files starts no Temporal.
 */
export const TIERS = ['engine', 'database', 'pure'] as const;
export type Tier = (typeof TIERS)[number];

/**
 * What a file calls that needs the engine tier: a worker, an emulator, a Temporal server of its
 * own, the run's Temporal address, queue prefix or workflow bundle, `npm start`.
 */
const ENGINE_USES = [
  /\bstartTestWorker\(/,
  /\buseEmulatorStack\(/,
  /\bstartStoreStack\(/,
  /\bstartAllEmulators\(/,
  /\bstartEmulator\(/,
  /\bstartStripeMock\(/,
  /\bstartDevServer\(/,
  /\bstartPostgresTemporal\(/,
  /\bfindTemporalBinary\(/,
  /\bfreshStartEnv\(/,
  /\binject\('(temporalAddress|taskQueuePrefix|workflowBundlePath)'\)/,
];

/** What a file calls that needs the run's database (test/helpers/db.ts and what builds on it). */
const DATABASE_USES = [
  /\b(testDb|appDb)\(/,
  /\binject\('(databaseUrl|appDatabaseUrl)'\)/,
  /\b(startApi|testServices|startApiProcess|dashboardHarness|scratchDatabase)\(/,
  /\b(newTenant|keyWith|refill)\(/,
  /\bmake(Tenant|ApiKey|Product|Subscription|Entitlement)\(/,
  /\b(countedConnection|seedSubscription|sellOnWebProvider)\(/,
];

/**
 * A file may name its tier where its need does not show in what it calls, with the reason:
 * `// test-tier: engine (POST /v1/sync starts a workflow)`. It can only raise the tier.
 */
const DECLARED = /^\/\/ test-tier: (engine|database|pure)\b/m;

/** The file's text and that of the modules it imports from its own folder tree (not test/helpers/, whose functions the lists above name). */
function sources(file: string, testRoot: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const text = fs.readFileSync(file, 'utf8');
  const local = [...text.matchAll(/from '(\.{1,2}\/[^']+)'/g)]
    .map((m) => path.resolve(path.dirname(file), m[1]))
    .map((p) => (p.endsWith('.ts') ? p : `${p}.ts`))
    .filter((p) => p.startsWith(testRoot + path.sep) && !p.startsWith(path.join(testRoot, 'helpers') + path.sep))
    .filter((p) => fs.existsSync(p));
  return [text, ...local.flatMap((p) => sources(p, testRoot, seen))];
}

/** The tier of one test file (an absolute path under `<root>/test`). */
export function tierOf(file: string, root: string): Tier {
  const texts = sources(file, path.join(root, 'test'));
  const uses = (patterns: RegExp[]) => texts.some((t) => patterns.some((p) => p.test(t)));
  const detected: Tier = uses(ENGINE_USES) ? 'engine' : uses(DATABASE_USES) ? 'database' : 'pure';
  const declared = DECLARED.exec(texts[0])?.[1] as Tier | undefined;
  return declared && TIERS.indexOf(declared) < TIERS.indexOf(detected) ? declared : detected;
}

/** Every test file under `<root>/test`, by tier, as paths relative to `root` (what a vitest project includes). */
export function testFilesByTier(root: string): Record<Tier, string[]> {
  const byTier: Record<Tier, string[]> = { engine: [], database: [], pure: [] };
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.test.ts')) byTier[tierOf(p, root)].push(path.relative(root, p));
    }
  };
  walk(path.join(root, 'test'));
  for (const t of TIERS) byTier[t].sort();
  return byTier;
}
