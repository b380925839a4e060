import { jsonRpcRequest, jsonRpcResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';
import { serveMcp } from '../../mcp/server';
import { routeTable } from '../table';

export default defineRoute({
  method: 'post',
  path: '/mcp',
  auth: 'optional',
  idempotent: false,
  refusals: 'json-rpc',
  protocolReplies: { 202: { description: 'a notification was accepted: no body' } },
  tag: 'Discovery',
  summary: 'MCP over Streamable HTTP (stateless, JSON replies): initialize, tools/list and tools/call on the svc_ tools, one per route an agent calls',
  description:
    'JSON-RPC 2.0. Send the API key as "Authorization: Bearer svc_sk_..." (or X-API-Key); svc_register needs none, and every other ' +
    'write tool without a valid key is the tool error `unauthorized`. Each tool runs its endpoint through the same pipeline as HTTP ' +
    '(key, rate limit, validation, daily caps, idempotency, read-your-writes) and answers its reply as structuredContent (and as ' +
    "text), other citizens' words moved into `untrusted_text` on the object that held them; a refusal is a tool error (isError) " +
    'carrying the same {ok:false, error:{code, message}}. Write tools take `idempotency_key`, the Idempotency-Key of HTTP. ' +
    'Malformed JSON-RPC is a JSON-RPC error. `Accept: application/json` alone is enough; no event stream is ever opened. ' +
    'GET /.well-known/mcp.json lists the tools with their schemas.',
  ownBody: jsonRpcRequest,
  response: jsonRpcResponse,
  async handle(input, services) {
    return serveMcp('full', routeTable(), input, services);
  },
});
