import { loadConfig } from '@svc/config';
import { runUntilSignalled } from '@svc/runtime';
import { startEmbedded } from './embedded';

/** `npm start`: the whole service in one process (see ./embedded.ts). */
runUntilSignalled('the service', async () => {
  const running = await startEmbedded(loadConfig());
  return { log: running.services.log, stop: () => running.close() };
});
