import { startBundledLocalnet } from '@svc/app-localnet';
import { failStartup, serveUntilStopped } from './childSide';

// The bundled chain as `npm start` runs it, persistence included (DATA_DIR from the parent). BENCH_LOCALNET_PORT
// fixes its port (the WebSocket on the next), for a service that is given only SOLANA_RPC_URL; 0 picks free ports.
startBundledLocalnet({ port: Number(process.env.BENCH_LOCALNET_PORT ?? 0), dataDir: process.env.DATA_DIR ?? null, solUsd: 150 })
  .then((net) => serveUntilStopped(Number(new URL(net.rpcUrl).port), () => net.close(), { ws: net.wsUrl }))
  .catch(failStartup);
