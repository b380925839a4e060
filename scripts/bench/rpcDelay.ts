import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SolanaChain } from '@svc/chain';
import type { RunningServer } from '../embedded';
import type { Cleanup } from './cleanup';

/**
 * A JSON-RPC hop that answers each call `delayMs` later than the chain would, like a hosted RPC a network away
 * (40 ms is a good one). Only HTTP calls are delayed; subscriptions still go to the chain's WebSocket.
 */
export async function delayedRpc(upstream: string, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      try {
        const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
      } catch (error) {
        res.writeHead(502).end(String(error));
      }
    });
  });
  // Many concurrent calls, kept alive: the hop must not be the bottleneck it simulates.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        // Calls in flight finish; kept-alive connections, which would hold close() open for a minute, go as they idle.
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        server.close(() => {
          clearInterval(idle);
          resolve();
        });
      }),
  };
}

/**
 * Puts the running service behind a delayed hop to its own chain: its connection (market reads, the pipeline's
 * sends, confirmations and reads, all of which take the chain from the runtime when they run) is replaced by
 * one through the hop. Returns the hop's URL, for a baseline that should wait as long.
 */
export async function delayServiceRpc(server: RunningServer, delayMs: number, cleanup: Cleanup): Promise<string> {
  const local = server.services.chain;
  const hop = await delayedRpc(local.options.rpcUrl, delayMs);
  const delayed = new SolanaChain({ ...local.options, rpcUrl: hop.url, wsUrl: local.options.wsUrl });
  server.services.chain = delayed;
  // Before the service stops (steps run last-added first), so that nothing of it calls through a hop that is gone.
  cleanup.add('put the service back on its own chain, and stop the delayed RPC', async () => {
    server.services.chain = local;
    await delayed.close();
    await hop.close();
  });
  return hop.url;
}
