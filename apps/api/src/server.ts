import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '@svc/config';
import { startProjector, type RunningProjector } from '@svc/app-projector';
import { startBundledLocalnet, type Localnet } from '@svc/app-localnet';
import { projections, readModelMigrations } from '@svc/projections';
import { migrate } from '@svc/readmodel';
import { createApp } from './http/app';
import { routeTable } from './routes/table';
import { buildServices, createLogger, type Services } from './services';

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  projector?: RunningProjector;
  /** The Solana JSON-RPC this process trades through: SOLANA_RPC_URL, or the bundled local chain. */
  solanaRpcUrl: string;
  close(): Promise<void>;
}

/** The API, and with `withProjector` the projector too, in this process. */
export async function startServer(config: Config, options: { withProjector: boolean }): Promise<RunningServer> {
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
  const { db } = services.database;
  await migrate(db, config.readModelSchema, readModelMigrations(projections));
  const projector = options.withProjector
    ? await startProjector({ database: services.database, store: services.store, bus: services.bus, schema: config.readModelSchema, batchSize: config.projectorBatchSize, log })
    : undefined;
  await services.projection.start();
  const { app, ready, close: closeApp } = createApp(services, routeTable());
  await ready;
  const server = http.createServer(app);
  // Requests Node itself cannot parse still get the envelope, not a bare 400.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
    const body = JSON.stringify({ ok: false, error: { code: 'invalid_request', message: 'the request is not valid HTTP' } });
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
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
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    services,
    projector,
    solanaRpcUrl,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        closeApp();
        await projector?.stop();
        await services.close();
        await localnet?.close();
      })();
      return closing;
    },
  };
}
