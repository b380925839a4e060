import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { REDIS_URL } from '../../test/support/env';
import { startChild, type Child } from './children';

const ROOT = path.resolve(__dirname, '../..');

/**
 * The real service (serveLedger.ts: ledger, projector, workers and API in one process) on `databaseUrl`, in a child
 * process: a Redis prefix of its own, the bundled chain on a free port, and no rate limit in the way. `dataDir` holds
 * the master key that sealed the treasury's wallet: a database is served again only with the same one.
 */
export function startServiceChild(databaseUrl: string, dataDir: string, options: { env?: NodeJS.ProcessEnv; startupTimeoutMs: number }): Promise<Child> {
  return startChild({
    name: 'service',
    entry: path.join(__dirname, 'serveLedger.ts'),
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_PREFIX: `bench${randomBytes(3).toString('hex')}`,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOCALNET_PORT: '0',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_RPS: '10000000',
      ...options.env,
    },
    startupTimeoutMs: options.startupTimeoutMs,
  });
}
