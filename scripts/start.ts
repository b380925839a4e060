import { loadConfig } from '@svc/config';
import { startEmbedded } from './embedded';

/** `npm start`: the whole service in one process (see ./embedded.ts). */
async function main(): Promise<void> {
  const config = loadConfig();
  const running = await startEmbedded(config, { outboxRecoveryEveryMs: config.outboxRecoveryMs });
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
