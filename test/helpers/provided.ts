import { inject, type ProvidedContext } from 'vitest';

/** Which tier's global setup provides each value (test/tier-projects.ts). */
const PROVIDED_BY: Record<keyof ProvidedContext, 'database' | 'engine'> = {
  databaseUrl: 'database',
  appDatabaseUrl: 'database',
  masterKey: 'database',
  temporalAddress: 'engine',
  taskQueuePrefix: 'engine',
  workflowBundlePath: 'engine',
};

/**
 * A value the run's global setup provides, or a clear error when this file runs in a tier that
 * does not start it: the file uses something its tier (test/tiers.ts) did not see it use, so
 * the classification, or a `// test-tier:` line in the file, must say it needs more.
 */
export function provided<K extends keyof ProvidedContext>(key: K): ProvidedContext[K] {
  const value = inject(key);
  if (value === undefined)
    throw new Error(
      `${key} is set up for the ${PROVIDED_BY[key]} tier only, and this file runs in a lower one: ` +
        `say what it needs with a "// test-tier: ${PROVIDED_BY[key]} (why)" line (test/tiers.ts)`,
    );
  return value;
}

/** The run's Temporal address when this tier has one (the engine tier), else undefined. */
export function temporalAddressIfAny(): string | undefined {
  return inject('temporalAddress') ?? undefined;
}

/** The run's MASTER_KEY where a tier made one (test/global-setup.ts), else undefined (a pure file's own). */
export function runMasterKeyIfAny(): string | undefined {
  return inject('masterKey') ?? undefined;
}
