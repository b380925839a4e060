import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { startLocalnet, type Localnet, type LocalnetOptions } from '@svc/app-localnet';

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
    async funded(sol = 10) {
      const keypair = Keypair.generate();
      const signature = await connection.requestAirdrop(keypair.publicKey, sol * LAMPORTS_PER_SOL);
      const latest = await connection.getLatestBlockhash();
      await connection.confirmTransaction({ signature, ...latest });
      return keypair;
    },
    async close() {
      await closeConnection(connection);
      await net.close();
    },
  };
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
