import { runMasterKeyIfAny } from './provided';
import { afterAll, beforeAll } from 'vitest';
import type { RunningEmulator } from '../../emulators/common/host';
import { startAllEmulators } from '../../emulators/registry';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { startApi } from './api';
import { generateMasterKey } from '../../vault/vault';
import { startTestWorker } from './temporal';

export interface EmulatorStack {
  emulators: Record<ProviderId, RunningEmulator>;
  worker: Awaited<ReturnType<typeof startTestWorker>>;
  api: Awaited<ReturnType<typeof startApi>>;
}

/**
 * The five emulators on free ports, a worker whose adapters call them and the listeners on the
 * worker's config, for one describe block; all closed after it. Read the fields inside tests.
 */
export function useEmulatorStack(masterKey = runMasterKeyIfAny() ?? generateMasterKey()): EmulatorStack {
  const s = {} as EmulatorStack;
  beforeAll(async () => {
    s.emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, s.emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    s.worker = await startTestWorker({ config: { providerBaseUrls }, masterKey });
    s.api = await startApi({ config: { ...s.worker.config } });
  });
  afterAll(async () => {
    await s.api?.close();
    await s.worker?.stop();
    await Promise.all(Object.values(s.emulators ?? {}).map((e) => e.close()));
  });
  return s;
}
