import pino, { type Logger } from 'pino';
import type { Config } from '@svc/config';

export function createLogger(config: Config, name: string): Logger {
  return pino({
    name,
    level: config.logLevel,
    // Keys and secrets never reach a log line, whatever a caller sends.
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.api_key', '*.secret_key', '*.secret', 'api_key', 'secret_key'],
      censor: '[redacted]',
    },
  });
}
