import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '@svc/config';
import { startProjector, type RunningProjector } from '@svc/app-projector';
import { startDoorbellWorker, type DoorbellWorkerTuning } from '@svc/app-workers';
import { startBundledLocalnet, type Localnet } from '@svc/app-localnet';
import { SolanaChain } from '@svc/chain';
import { projections, readModelMigrations } from '@svc/projections';
import { migrate } from '@svc/readmodel';
import { startAwardRecovery } from './commands/awardBounty';
import { createApp } from './http/app';
import { WsHub, readModelSource } from './live/wsHub';
import { routeTable } from './routes/table';
import { buildServices, createLogger, type Services } from './services';

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  projector?: RunningProjector;
  /** The /ws sockets this process pushes to. */
  wsHub: WsHub;
  /** The Solana JSON-RPC this process trades through: SOLANA_RPC_URL, or the bundled local chain. */
  solanaRpcUrl: string;
  close(): Promise<void>;
}

/** The API, and with `withProjector` the projector too, in this process. */
export async function startServer(
  config: Config,
  options: { withProjector: boolean; awardRecoveryEveryMs?: number; doorbellWorker?: DoorbellWorkerTuning },
): Promise<RunningServer> {
  const log = createLogger(config, 'svc-api');
  const services = await buildServices(config, log);
  // One process owns the bundled chain's files, so only the embedded shape starts it (after the database
  // lock above has refused a second process); start:api expects `npm run localnet`.
  let localnet: Localnet | undefined;
  try {
    localnet =
      options.withProjector && !config.solanaRpcUrl
        ? await startBundledLocalnet({
            port: config.localnetPort,
            host: '127.0.0.1',
            dataDir: config.dataDir,
            solUsd: config.localnetSolUsd,
            onError: (error) => log.error({ err: error }, 'localnet internal error'),
          })
        : undefined;
  } catch (error) {
    await services.close();
    throw error;
  }
  const solanaRpcUrl = config.solanaRpcUrl ?? localnet?.rpcUrl ?? `http://127.0.0.1:${config.localnetPort}`;
  if (localnet) services.chain = new SolanaChain({ rpcUrl: solanaRpcUrl, wsUrl: localnet.wsUrl, priceUrl: config.priceUrl ?? solanaRpcUrl });
  const { db } = services.database;
  await migrate(db, config.readModelSchema, readModelMigrations(projections));
  const projector = options.withProjector
    ? await startProjector({ database: services.database, store: services.store, bus: services.bus, schema: config.readModelSchema, batchSize: config.projectorBatchSize, log })
    : undefined;
  await services.projection.start();
  // The embedded shape delivers doorbells in-process; the distributed shape runs `npm run start:workers`.
  const doorbellWorker = options.withProjector
    ? await startDoorbellWorker({ store: services.doorbells, bus: services.bus, log, allowLoopback: config.doorbellAllowLoopback, caFile: config.doorbellCaFile, ...options.doorbellWorker })
    : undefined;
  const { app, ready, close: closeApp } = createApp(services, routeTable());
  await ready;
  const server = http.createServer(app);
  // Requests Node itself cannot parse still get the envelope, not a bare 400.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
    const body = JSON.stringify({ ok: false, error: { code: 'invalid_request', message: 'the request is not valid HTTP' } });
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  await services.pulse.start();
  const wsHub = new WsHub(services.bus, readModelSource(db, config.readModelSchema, services.ledgerHead));
  await wsHub.start(server);
  services.metrics.watchLive(() => wsHub.size, () => services.pulse.held);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  log.info(
    { url, solana_rpc: solanaRpcUrl, store: services.store.kind, database: services.database.kind, bus: services.bus.kind, projector: Boolean(projector), ledger_head: services.writer.head.seq },
    'service listening',
  );
  // Award payments another run of this service left paid-but-unrecorded are finished here and every 30 s.
  const awardRecovery = startAwardRecovery(services, options.awardRecoveryEveryMs);
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    services,
    projector,
    wsHub,
    solanaRpcUrl,
    close() {
      closing ??= (async () => {
        await wsHub.stop();
        // Held long-polls are answered (503, Connection: close) before the remaining connections are cut.
        await services.pulse.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        closeApp();
        await awardRecovery.stop();
        await doorbellWorker?.stop();
        await projector?.stop();
        await services.close();
        await localnet?.close();
      })();
      return closing;
    },
  };
}
