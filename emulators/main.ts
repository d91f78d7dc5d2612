import { loadConfig } from '../runtime/config';
import { startAllEmulators } from './registry';

// `npm run emulators`: the five provider emulators on 4101–4105 with durable state under .data/emulators.
// EMULATOR_RATE_LIMITS=1 makes each enforce its provider's documented rate limit from the start.
const config = loadConfig();
const running = await startAllEmulators(config, { rateLimits: config.emulatorRateLimits });
for (const [provider, e] of Object.entries(running)) console.log(`${provider.padEnd(14)} ${e.url}`);
const stop = async () => {
  await Promise.all(Object.values(running).map((e) => e.close()));
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
