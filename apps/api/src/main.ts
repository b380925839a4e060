import { loadConfig } from '@svc/config';
import { startServer } from './server';

/** `npm run start:api`: the API alone (the distributed shape). `npm start` runs the whole service in one process. */
async function main(): Promise<void> {
  if (process.argv.includes('--embedded')) throw new Error('the single-process service is `npm start` (scripts/start.ts); apps/api runs the API alone');
  const running = await startServer(loadConfig());
  const stop = async (signal: string) => {
    running.services.log.info({ signal }, 'shutting down');
    await running.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error) => {
  console.error('failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
