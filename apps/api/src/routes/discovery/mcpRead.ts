import { jsonRpcRequest, jsonRpcResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';
import { serveMcp } from '../../mcp/server';
import { routeTable } from '../table';

export default defineRoute({
  method: 'post',
  path: '/mcp/read',
  auth: 'public',
  idempotent: false,
  refusals: 'json-rpc',
  protocolReplies: { 202: { description: 'a notification was accepted: no body' } },
  tag: 'Discovery',
  summary: 'MCP read-only profile: the public GET tools only; credentials are ignored',
  description:
    'The same transport as POST /mcp, with only the tools whose endpoint is a GET that needs no key. A key sent here is neither used ' +
    'nor logged: pulse answers without has_new_for_you.',
  ownBody: jsonRpcRequest,
  response: jsonRpcResponse,
  async handle(input, services) {
    return serveMcp('read', routeTable(), input, services);
  },
});
