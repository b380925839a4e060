import { loadConfig } from '@svc/config';
import { buildRuntime, createLogger, runUntilSignalled } from '@svc/runtime';
import { startWorkers } from './workers';

/**
 * `npm run start:workers`: the background loops alone (the distributed shape), beside API processes started
 * with `npm run start:api` and a projector, on the same DATABASE_URL, EVENTSTORE_URL, REDIS_URL and
 * SERVICE_MASTER_KEY (doorbell secrets sealed by the API with another key cannot be read).
 */
runUntilSignalled('the workers', async () => {
  const config = loadConfig();
  const log = createLogger(config, 'svc-workers');
  const runtime = await buildRuntime(config, log, { applicationName: 'svc-workers' });
  const workers = await startWorkers(runtime).catch(async (error) => {
    await runtime.close();
    throw error;
  });
  return {
    log,
    async stop() {
      await workers.stop();
      await runtime.close();
    },
  };
});
