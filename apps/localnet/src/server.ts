import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LocalChain } from './chain/localChain';
import { GraduationKeeper } from './keeper/graduation';
import { emulatedPrograms } from './programs';
import { PUMP_AMM_PROGRAM_ID, PUMP_PROGRAM_ID } from './programs/pump/addresses';
import { handleJsonRpc, sendJson } from './rpc/http';
import { SubscriptionServer } from './rpc/subscriptions';
import type { EmulatedProgram, GenesisContext } from './runtime/program';

export type ExtraRoute = (chain: LocalChain, req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

export interface LocalnetOptions {
  /** HTTP JSON-RPC port; the PubSub WebSocket listens on port + 1, as solana-test-validator does. 0 picks free ports. */
  port: number;
  host?: string;
  /** Where the chain persists; null keeps it in memory. */
  dataDir: string | null;
  programs?: EmulatedProgram[];
  seeds?: ((genesis: GenesisContext) => void)[];
  routes?: ExtraRoute[];
  /** What getVersion adds to say what this chain is. */
  identity?: Record<string, unknown>;
  onError?: (error: unknown) => void;
  /** The wall clock that drives slots; tests move it to expire blockhashes. */
  now?: () => number;
  /**
   * Migrate complete bonding curves into PumpSwap as pump's migrator does on mainnet. On by default when both
   * programs are emulated; off for a chain on which the caller sends `migrate` itself.
   */
  graduationKeeper?: boolean;
}

export interface Localnet {
  chain: LocalChain;
  /** The graduation keeper, when it runs: `whenMigrated(mint)` waits for a coin's pool. */
  keeper: GraduationKeeper | null;
  rpcUrl: string;
  wsUrl: string;
  close(): Promise<void>;
}

export async function startLocalnet(options: LocalnetOptions): Promise<Localnet> {
  const host = options.host ?? '127.0.0.1';
  const programs = options.programs ?? emulatedPrograms();
  const chain = await LocalChain.open({ dataDir: options.dataDir, programs, seeds: options.seeds ?? [], now: options.now, identity: options.identity });
  chain.on('internal-error', (error) => options.onError?.(error));
  const graduates = programs.some((p) => p.programId.equals(PUMP_PROGRAM_ID)) && programs.some((p) => p.programId.equals(PUMP_AMM_PROGRAM_ID));
  const keeper = graduates && options.graduationKeeper !== false ? new GraduationKeeper(chain, (error) => options.onError?.(error)) : null;
  const routes = options.routes ?? [];
  const http = createServer((req, res) => {
    void (async () => {
      const url = URL.canParse(req.url ?? '/', 'http://localnet') ? new URL(req.url ?? '/', 'http://localnet') : null;
      if (!url) return sendJson(res, 400, { error: 'Bad request URL' });
      if (req.method === 'POST' && url.pathname === '/') return handleJsonRpc(chain, req, res);
      if (req.method === 'GET' && url.pathname === '/health') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('ok');
      }
      for (const route of routes) if (await route(chain, req, res, url)) return;
      sendJson(res, 404, { error: 'Not Found' });
    })().catch((error) => {
      options.onError?.(error);
      if (!res.headersSent) sendJson(res, 500, { error: 'Internal error' });
      else res.destroy();
    });
  });
  let port: number;
  try {
    ({ port } = await listen(http, options.port, host));
  } catch (error) {
    await keeper?.close();
    await chain.close();
    throw error;
  }
  const ws = createServer((_, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' });
    res.end('WebSocket only');
  });
  let wsPort: number;
  try {
    wsPort = (await listen(ws, options.port === 0 ? 0 : port + 1, host)).port;
  } catch (error) {
    http.close();
    await keeper?.close();
    await chain.close();
    throw error;
  }
  const subscriptions = new SubscriptionServer(chain, ws);
  return {
    chain,
    keeper,
    rpcUrl: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${wsPort}`,
    async close() {
      await subscriptions.close();
      await Promise.all([closeServer(http), closeServer(ws)]);
      await keeper?.close();
      await chain.close();
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
