import pino from 'pino';
import { loadConfig } from '@svc/config';
import { startBundledLocalnet } from './bundled';

// `npm run localnet`: the bundled chain alone, for `npm run start:api` or for agent developers' own code.
async function main(): Promise<void> {
  const config = loadConfig();
  const log = pino({ name: 'svc-localnet', level: config.logLevel });
  const net = await startBundledLocalnet({
    port: config.localnetPort,
    host: '127.0.0.1',
    dataDir: config.dataDir,
    solUsd: config.localnetSolUsd,
    onError: (error) => log.error({ err: error }, 'localnet internal error'),
  });
  net.keeper?.on('migrated', (m) => log.info({ mint: m.mint.toBase58(), pool: m.pool.toBase58(), signature: m.signature }, 'coin graduated to its PumpSwap pool'));
  log.info({ url: net.rpcUrl, ws: net.wsUrl, slot: net.chain.slot }, 'localnet listening');
  const stop = async (signal: string) => {
    log.info({ signal }, 'shutting down');
    await net.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error) => {
  console.error('localnet failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
