import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LocalChain } from '../chain/localChain';
import { RpcError } from './errors';
import { rpcJson } from './json';
import { METHODS } from './methods';

export const MAX_BODY_BYTES = 1 << 20;

export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        resolve(null);
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = rpcJson(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

type JsonRpcId = string | number | null;

async function call(chain: LocalChain, request: unknown): Promise<object | null> {
  if (!request || typeof request !== 'object' || Array.isArray(request)) {
    return { jsonrpc: '2.0', error: RpcError.invalidRequest().toJSON(), id: null };
  }
  const { jsonrpc, method, params, id } = request as { jsonrpc?: unknown; method?: unknown; params?: unknown; id?: unknown };
  const replyId: JsonRpcId = typeof id === 'string' || typeof id === 'number' ? id : null;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || (params !== undefined && !Array.isArray(params))) {
    return { jsonrpc: '2.0', error: RpcError.invalidRequest().toJSON(), id: replyId };
  }
  const handler = Object.prototype.hasOwnProperty.call(METHODS, method) ? METHODS[method] : undefined;
  try {
    if (!handler) throw RpcError.methodNotFound();
    requireContextSlot(chain, params as unknown[] | undefined);
    const result = await handler(chain, (params as unknown[] | undefined) ?? []);
    return { jsonrpc: '2.0', result, id: replyId };
  } catch (error) {
    const rpcError = error instanceof RpcError ? error : new RpcError(-32603, 'Internal error');
    if (!(error instanceof RpcError)) chain.emit('internal-error', error);
    return { jsonrpc: '2.0', error: rpcError.toJSON(), id: replyId };
  }
}

/** `minContextSlot` in any method's config: refuse until the chain has reached that slot, as agave does. */
function requireContextSlot(chain: LocalChain, params: unknown[] | undefined): void {
  for (const param of params ?? []) {
    const wanted = param && typeof param === 'object' && !Array.isArray(param) ? (param as { minContextSlot?: unknown }).minContextSlot : undefined;
    if (typeof wanted === 'number' && wanted > chain.slot) {
      throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: chain.slot });
    }
  }
}

/** POST / — a JSON-RPC 2.0 request or batch. */
export async function handleJsonRpc(chain: LocalChain, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  if (body === null) return sendJson(res, 413, { jsonrpc: '2.0', error: { code: -32600, message: 'Request too large' }, id: null });
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return sendJson(res, 200, { jsonrpc: '2.0', error: RpcError.parse().toJSON(), id: null });
  }
  if (Array.isArray(parsed)) {
    if (parsed.length === 0) return sendJson(res, 200, { jsonrpc: '2.0', error: RpcError.invalidRequest().toJSON(), id: null });
    const replies = [];
    for (const request of parsed) replies.push(await call(chain, request));
    return sendJson(res, 200, replies);
  }
  sendJson(res, 200, await call(chain, parsed));
}
