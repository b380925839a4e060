/** Child process: the projector alone, as `npm run start:projector` runs it (the split shape). */
import pino from 'pino';
import { startProjector } from '@svc/app-projector';
import { createBus } from '@svc/bus';
import { loadConfig } from '@svc/config';
import { openDatabase } from '@svc/readmodel';
import { openEventStore } from '../../apps/api/src/services';
import { failStartup, serveUntilStopped } from './childSide';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: config.logLevel });
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, applicationName: 'bench-projector' });
  const { store } = await openEventStore(config, database);
  const bus = createBus(config.redisUrl, config.redisPrefix);
  const running = await startProjector({ database, store, bus, schema: config.readModelSchema, batchSize: config.projectorBatchSize, log });
  serveUntilStopped(0, async () => {
    await running.stop();
    await bus.close();
    await store.close();
    await database.close();
  });
}

main().catch(failStartup);
