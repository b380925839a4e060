/** Child process: the projector alone, as `npm run start:projector` runs it (the split shape). */
import pino from 'pino';
import { startProjector } from '@svc/app-projector';
import { loadConfig } from '@svc/config';
import { openBus, openStorage } from '@svc/runtime';
import { failStartup, serveUntilStopped } from './childSide';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: config.logLevel });
  const { database, store, close } = await openStorage(config, 'bench-projector');
  const bus = openBus(config);
  const running = await startProjector({ database, store, bus, schema: config.readModelSchema, batchSize: config.projectorBatchSize, log });
  serveUntilStopped(0, async () => {
    await running.stop();
    await bus.close();
    await close();
  });
}

main().catch(failStartup);
