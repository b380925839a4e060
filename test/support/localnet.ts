import { Connection, Keypair } from '@solana/web3.js';
import { startLocalnet, type Localnet, type LocalnetOptions } from '@svc/app-localnet';
import { airdrop } from './citizens';
import { freePortPair } from './ports';
import { startChild, type ChildService } from './spawn';

export interface LocalnetClient {
  net: Localnet;
  connection: Connection;
  /** A new keypair holding `sol` SOL from the faucet, confirmed. */
  funded(sol?: number): Promise<Keypair>;
  close(): Promise<void>;
}

/** A local chain on free ports with a web3.js Connection that confirms over its WebSocket. */
export async function localnet(options: Partial<LocalnetOptions> = {}): Promise<LocalnetClient> {
  const net = await startLocalnet({ port: 0, dataDir: null, ...options });
  const connection = new Connection(net.rpcUrl, { commitment: 'confirmed', wsEndpoint: net.wsUrl });
  return {
    net,
    connection,
    funded: (sol = 10) => fundedKeypair(connection, sol),
    async close() {
      await closeConnection(connection);
      await net.close();
    },
  };
}

/** A new keypair holding `sol` SOL from the chain's faucet, confirmed. */
export async function fundedKeypair(connection: Connection, sol = 10): Promise<Keypair> {
  const keypair = Keypair.generate();
  await airdrop(connection, keypair.publicKey.toBase58(), sol);
  return keypair;
}

export interface LocalnetProcess extends ChildService {
  /** The chain's WebSocket, on the port after its JSON-RPC (`url`). */
  wsUrl: string;
}

/**
 * `npm run localnet` in a process of its own, which a test can kill or leave running while it kills the service:
 * a real chain does not crash with the service. It listens on two consecutive free ports, JSON-RPC then WebSocket,
 * where a service told only SOLANA_RPC_URL looks for them.
 */
export async function startLocalnetChild(dataDir: string): Promise<LocalnetProcess> {
  const service = await startChild('apps/localnet/src/main.ts', [], { DATA_DIR: dataDir, LOCALNET_PORT: String(await freePortPair()), LOG_LEVEL: 'info' }, 'localnet listening');
  const ready = JSON.parse(service.output.find((line) => line.includes('"msg":"localnet listening"'))!);
  return { ...service, wsUrl: ready.ws };
}

/** web3.js keeps reconnecting its WebSocket forever once the server is gone; close it cleanly first. */
export async function closeConnection(connection: Connection): Promise<void> {
  const internals = connection as unknown as {
    _rpcWebSocket: { setAutoReconnect(on: boolean): void; socket?: { readyState: number }; close(): void; once(event: string, fn: () => void): void };
    _rpcWebSocketIdleTimeout: NodeJS.Timeout | null;
  };
  const socket = internals._rpcWebSocket;
  socket.setAutoReconnect(false);
  if (internals._rpcWebSocketIdleTimeout) clearTimeout(internals._rpcWebSocketIdleTimeout);
  if (socket.socket && socket.socket.readyState <= 1) {
    const closed = new Promise<void>((resolve) => socket.once('close', resolve));
    socket.close();
    await closed;
  }
}

export async function rpc(url: string, method: string, params: unknown[] = []): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return response.json();
}
