import http from 'node:http';
import type { AddressInfo } from 'node:net';

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
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
