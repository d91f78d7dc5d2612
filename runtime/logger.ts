import { pino, type Logger } from 'pino';
import { bootstrapLogLevel } from './config';

/**
 * JSON logs. Redaction is a second line of defence: code never logs secrets on
 * purpose, but any object carrying these keys is masked before it is written.
 */
export const REDACT_PATHS = [
  '*.secret',
  '*.secret_key',
  '*.api_key',
  '*.credential',
  '*.credentials',
  '*.password',
  '*.webhook_secret',
  '*.authorization',
  'req.headers.authorization',
  'headers.authorization',
];

/** Where log lines go: a stream, or anything with its `write` (a CLI run's stderr). */
export interface LogDestination {
  write(line: string): unknown;
}

export function createLogger(level = bootstrapLogLevel(), destination?: LogDestination): Logger {
  return pino(
    { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { svc: 'billing' } },
    destination as never,
  );
}

export const logger = createLogger();
