import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from '@svc/config';

/** Names a secret goes by, in the snake_case of the API and the camelCase of the code. */
const SECRET_NAMES = ['api_key', 'apiKey', 'secret_key', 'secretKey', 'secret', 'walletSecret', 'wallet_secret', 'masterKey', 'master_key', 'privateKey', 'private_key', 'password'];
/** How deep under the log object a secret name is still found: pino's redaction has no recursive wildcard. */
const SECRET_DEPTH = 4;

function secretPaths(): string[] {
  const paths = ['req.headers.authorization', 'req.headers["x-api-key"]', '*.headers.authorization', '*.headers["x-api-key"]'];
  for (const name of SECRET_NAMES) for (let depth = 0; depth <= SECRET_DEPTH; depth += 1) paths.push(`${'*.'.repeat(depth)}${name}`);
  return paths;
}

export function createLogger(config: Config, name: string, destination?: DestinationStream): Logger {
  // Keys and secrets never reach a log line, whatever a caller sends.
  const options = { name, level: config.logLevel, redact: { paths: secretPaths(), censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
