import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SolanaChain } from '@svc/chain';

/** What the proxy answers itself to one JSON-RPC request (its raw body); undefined passes it on to the real RPC. */
export type RpcRule = (raw: string) => { status: number; body: string } | undefined;

/** A rule's answer to a JSON-RPC call: `result`, under the id the call carried. */
export function rpcResult(raw: string, result: unknown): { status: number; body: string } {
  return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(raw) as { id?: unknown }).id ?? null, result }) };
}

/** A rule's JSON-RPC error to a call, as a node refuses one (devnet's faucet says "airdrop request failed"). */
export function rpcError(raw: string, code: number, message: string): { status: number; body: string } {
  return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(raw) as { id?: unknown }).id ?? null, error: { code, message } }) };
}

/**
 * Runs `during` with the service's chain behind a JSON-RPC proxy of the test's own, which answers what `rule`
 * answers and passes everything else to the real RPC; the service's chain is put back after. Subscriptions
 * still go to the real chain's WebSocket.
 */
export async function withRpcProxy<T>(services: { chain: SolanaChain }, rule: RpcRule, during: () => Promise<T>): Promise<T> {
  const reachable = services.chain;
  const upstream = reachable.options.rpcUrl;
  const proxy = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', async () => {
      const own = rule(raw);
      if (own) return res.writeHead(own.status, { 'content-type': 'application/json' }).end(own.body);
      const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const wsUrl = reachable.options.wsUrl ?? reachable.connection.rpcEndpoint.replace(/^http/, 'ws').replace(/:(\d+)/, (_m, port) => `:${Number(port) + 1}`);
  services.chain = new SolanaChain({ ...reachable.options, rpcUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, wsUrl });
  try {
    return await during();
  } finally {
    await services.chain.close();
    services.chain = reachable;
    await new Promise((resolve) => proxy.close(resolve));
  }
}
