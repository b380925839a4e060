import pino from 'pino';
import { createBus } from '@svc/bus';
import { loadConfig } from '@svc/config';
import { projections, readModelMigrations } from '@svc/projections';
import { migrate, openDatabase } from '@svc/readmodel';
import { DoorbellStore, loadMasterKey } from '@svc/vault';
import { startDoorbellWorker } from './doorbellWorker';

/**
 * `npm run start:workers`: doorbell delivery alone (the distributed shape), beside API processes started
 * with `npm run start:api` and a projector, on the same DATABASE_URL, REDIS_URL and SERVICE_MASTER_KEY.
 * Any number may run: they share the fan-out position and claim deliveries with row locks.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = pino({ name: 'svc-workers', level: config.logLevel });
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, applicationName: 'svc-workers' });
  const master = loadMasterKey(config.serviceMasterKey, config.dataDir);
  if (master.generatedAt) {
    log.warn({ file: master.generatedAt }, 'SERVICE_MASTER_KEY is unset: generated one; doorbell secrets sealed by the API with another key cannot be read');
  }
  // The fan-out reads the projector's `entries`; whichever process starts first creates the read models.
  await migrate(database.db, config.readModelSchema, readModelMigrations(projections));
  const store = await new DoorbellStore(database, master.key, config.readModelSchema).init();
  const bus = createBus(config.redisUrl, config.redisPrefix);
  const worker = await startDoorbellWorker({ store, bus, log, allowLoopback: config.doorbellAllowLoopback, caFile: config.doorbellCaFile });
  const stop = async (signal: string) => {
    log.info({ signal }, 'shutting down');
    await worker.stop();
    await bus.close();
    await database.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error) => {
  console.error('workers failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
