/**
 * A configuration value the service cannot run with, naming its variable (never its value: some
 * are secrets). Here, not in runtime/config.ts, so providers/ (the master key's parser) can throw
 * it without importing the runtime layer that builds on providers/.
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}
