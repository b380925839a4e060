import { loadConfig } from '@svc/config';
import { runUntilSignalled } from '@svc/runtime';
import { startServer } from './server';

/** `npm run start:api`: the API alone (the distributed shape). `npm start` runs the whole service in one process. */
runUntilSignalled('the API', async () => {
  if (process.argv.includes('--embedded')) throw new Error('the single-process service is `npm start` (scripts/start.ts); apps/api runs the API alone');
  const running = await startServer(loadConfig());
  return { log: running.services.log, stop: () => running.close() };
});
