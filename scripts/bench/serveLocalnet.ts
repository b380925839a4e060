import { startBundledLocalnet } from '@svc/app-localnet';
import { failStartup, serveUntilStopped } from './childSide';

// The bundled chain as `npm start` runs it, persistence included (DATA_DIR from the parent).
startBundledLocalnet({ port: 0, dataDir: process.env.DATA_DIR ?? null, solUsd: 150 })
  .then((net) => serveUntilStopped(Number(new URL(net.rpcUrl).port), () => net.close(), { ws: net.wsUrl }))
  .catch(failStartup);
