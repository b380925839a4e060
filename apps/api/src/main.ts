import { loadConfig } from '@svc/config';
import { startServer } from './server';

// `npm start` (--embedded) runs the API and the projector in one process; `npm run start:api` the API alone.
async function main(): Promise<void> {
  const withProjector = process.argv.includes('--embedded');
  const running = await startServer(loadConfig(), { withProjector });
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
