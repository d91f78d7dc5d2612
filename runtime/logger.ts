import { pino, type Logger } from 'pino';

/**
 * JSON logs. Redaction is a second line of defence: code never logs secrets on
 * purpose, but any object carrying these keys is masked before it is written.
 */
export const REDACT_PATHS = [
  '*.secret', '*.secret_key', '*.api_key', '*.credential', '*.credentials', '*.password',
  '*.webhook_secret', '*.authorization', 'req.headers.authorization', 'headers.authorization',
];

/**
 * A bootstrap read, before any configuration: the module-level `logger` below exists as soon as
 * this module is imported (a configuration error itself is logged through it), so its level comes
 * straight from LOG_LEVEL. Code that holds a Config passes `config.logLevel` instead.
 */
const bootstrapLevel = () => process.env.LOG_LEVEL || 'info';

export function createLogger(level = bootstrapLevel(), destination?: NodeJS.WritableStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { svc: 'billing' } }, destination as never);
}

export const logger = createLogger();
