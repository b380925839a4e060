import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '@svc/config';
import { rpcOrigin } from '@svc/chain';
import { projections, readModelMigrations } from '@svc/projections';
import { migrate } from '@svc/readmodel';
import { buildRuntime, createLogger, type Runtime } from '@svc/runtime';
import { createApp } from './http/app';
import { REPLAYED_READ_MODEL, WsHub, readModelSource } from './live/wsHub';
import { routeTable } from './routes/table';
import { buildServices, type Services } from './services';

export interface RunningApi {
  url: string;
  port: number;
  services: Services;
  /** The /ws sockets this process pushes to. */
  wsHub: WsHub;
  /** The Solana JSON-RPC this process trades through: SOLANA_RPC_URL, or the bundled local chain. */
  solanaRpcUrl: string;
  close(): Promise<void>;
}

export interface ApiOptions {
  /**
   * Serve on this runtime, which the caller built and closes (the embedded shape). Unset, the API opens
   * its own from `config` and closes it.
   */
  runtime?: Runtime;
}

/** The API alone: HTTP, /ws and /pulse. The projector, the workers and a local chain run elsewhere. */
export async function startServer(config: Config, options: ApiOptions = {}): Promise<RunningApi> {
  const runtime = options.runtime ?? (await buildRuntime(config, createLogger(config, 'svc-api'), { applicationName: 'svc-api' }));
  const ownsRuntime = !options.runtime;
  try {
    return await serve(buildServices(runtime), ownsRuntime);
  } catch (error) {
    if (ownsRuntime) await runtime.close().catch(() => undefined);
    throw error;
  }
}

async function serve(services: Services, ownsRuntime: boolean): Promise<RunningApi> {
  const { config, log } = services;
  const { db } = services.database;
  await migrate(db, config.readModelSchema, readModelMigrations(projections));
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
  await services.pulse.start();
  const wsHub = new WsHub(services.bus, readModelSource(db, config.readModelSchema, services.ledgerHead), { checkpoint: services.projection.follower([REPLAYED_READ_MODEL]) });
  await wsHub.start(server);
  services.metrics.watchLive(() => wsHub.size, () => services.pulse.held);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  services.attestor.schedule(config.attestFullEveryMs);
  const url = `http://127.0.0.1:${port}`;
  // PORT=0 picks a free port: the default public URL (hosted metadata, OpenAPI servers) names the one picked.
  if (config.publicUrl === 'http://localhost:0') services.config.publicUrl = `http://localhost:${port}`;
  const solanaRpcUrl = services.chain.options.rpcUrl;
  log.info(
    { url, solana_rpc: rpcOrigin(solanaRpcUrl), store: services.store.kind, database: services.database.kind, bus: services.bus.kind, ledger_head: services.writer.head.seq },
    'service listening',
  );
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    services,
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
        await services.attestor.stop();
        await services.projection.stop().catch(() => undefined);
        if (ownsRuntime) await services.close();
      })();
      return closing;
    },
  };
}
