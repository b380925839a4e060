import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { REDIS_URL, freshDatabase, tempDir, testConfig } from '../../test/support/env';
import { startEmbedded, type RunningServer } from '../embedded';
import { deleteRedisKeys, type Cleanup } from './cleanup';

/**
 * The whole service (startEmbedded: API, projector, workers and, with no RPC set, the bundled chain) in this
 * process, for the benchmark `name`: on a fresh PostgreSQL database, data directory and Redis prefix, which
 * `cleanup` removes, with no rate limit in the way and outbox recovery left out of the measured minutes. `env` adds
 * to or overrides the service's variables (SOLANA_RPC_URL: a chain in another process instead of the bundled one).
 */
export async function startBenchService(cleanup: Cleanup, name: string, env: Record<string, string> = {}): Promise<RunningServer> {
  const dataDir = tempDir(`bench-${name}`);
  cleanup.add('remove the data directory', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const db = await freshDatabase(`bench_${name}`);
  cleanup.add(`drop database ${db.name}`, () => db.drop());
  const config = testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: dataDir, SERVICE_MASTER_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'warn', RATE_LIMIT_RPS: '1000000', ...env });
  cleanup.add('delete the Redis keys', () => deleteRedisKeys(REDIS_URL, config.redisPrefix));
  process.stderr.write('starting the service (embedded) ... ');
  const server = await startEmbedded(config, { outboxRecoveryEveryMs: 3_600_000 });
  cleanup.add('stop the service', () => server.close());
  return server;
}
