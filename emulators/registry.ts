import path from 'node:path';
import type { Config } from '../runtime/config';
import { PROVIDERS, type ProviderId } from '../domain/providers';
import { startEmulator, type RunningEmulator } from './common/host';
import type { EmulatorFactory } from './common/types';

/** Each provider's emulator lives in emulators/<provider>/emulator.ts and exports `createEmulator`. */
export async function loadFactory(provider: ProviderId): Promise<EmulatorFactory> {
  // Always the `.ts` source (tsx, vitest): the emulators are never compiled (emulators/package.json).
  const mod = (await import(`./${provider}/emulator.ts`)) as { createEmulator: EmulatorFactory };
  return mod.createEmulator;
}

/**
 * Start all five emulators (ports 4101–4105 by default; 0 = any free port; `rateLimits`: enforce each provider's
 * documented limit).
 */
export async function startAllEmulators(
  config: Pick<Config, 'emulatorPorts' | 'dataDir'> & Partial<Pick<Config, 'bindHost'>>,
  opts: { persistent?: boolean; anyPort?: boolean; rateLimits?: boolean } = {},
): Promise<Record<ProviderId, RunningEmulator>> {
  const out = {} as Record<ProviderId, RunningEmulator>;
  try {
    for (const p of PROVIDERS) {
      out[p] = await startEmulator(await loadFactory(p), {
        port: opts.anyPort ? 0 : config.emulatorPorts[p],
        host: config.bindHost ?? '127.0.0.1',
        stateFile: opts.persistent === false ? undefined : path.join(config.dataDir, 'emulators', `${p}.json`),
        rateLimit: { enabled: opts.rateLimits ?? false },
      });
    }
  } catch (err) {
    await Promise.all(Object.values(out).map((e) => e.close()));
    throw err;
  }
  return out;
}
