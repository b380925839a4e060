import { ErrorCode, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { Outcome } from '../../apps/api/src/http/pipeline';
import { directReply } from '../../apps/api/src/mcp/direct';
import { sdkReply, type McpExchange, type McpReply } from '../../apps/api/src/mcp/sdkServer';
import { servedProfile } from '../../apps/api/src/mcp/server';
import { JsonRpcRefusal, resultOf, type CallTool } from '../../apps/api/src/mcp/toolCall';
import type { McpProfile } from '../../apps/api/src/mcp/tools';
import { routeTable } from '../../apps/api/src/routes/table';

/** What a reply puts on the wire. */
const wire = (reply: McpReply | undefined) => reply && { status: reply.status, contentType: reply.contentType, body: reply.body?.toString() };

const json = (body: Record<string, unknown>, status = 200, replayed = false): Outcome => ({ kind: 'json', status, body, headers: {}, replayed });

/** Tools that answer each kind of result a route's outcome makes, one echoing the arguments it was given as they came. */
const OUTCOMES: Record<string, (args: Record<string, unknown>) => Outcome> = {
  svc_post_get: () => json({ ok: true, post: { id: 'post_1', body: 'gm', tags: ['a'], author: { handle: 'alice', bio: null } } }),
  svc_me: (args) => json({ ok: false, error: { code: 'invalid_request', message: 'echo', args } }, 400),
  svc_vote: () => json({ ok: false, error: { code: 'self_vote', message: 'no' } }, 403),
  svc_buy: () => json({ ok: true, signature: 'sig' }, 200, true),
  svc_post: () => json({ ok: false, error: { code: 'invalid_request', message: 'body is required', field: 'body' } }, 400, true),
  svc_attest: () => ({ kind: 'raw', raw: Buffer.from('raw text'), contentType: 'text/plain', headers: {} }),
  svc_front: () => ({ kind: 'notModified', headers: {} }),
  svc_pulse: () => ({ kind: 'sent' }),
};

const callTool: CallTool = async (name, args) => {
  const outcome = OUTCOMES[name];
  if (!outcome) throw new JsonRpcRefusal(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(name)}; tools/list names them`);
  return resultOf(outcome(args));
};

let nextId = 1;
const request = (method: string, params?: Record<string, unknown>, id: string | number = nextId++) => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
const initialize = (protocolVersion: string) => request('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'unit', version: '0' } });
const exchange = (message: unknown, protocolVersion?: string): McpExchange => ({ message, protocolVersion, url: '/mcp' });

describe('MCP: the direct path answers as the SDK Server does', () => {
  const answered: Array<[string, McpProfile, McpExchange]> = [
    ['initialize at a version both speak', 'full', exchange(initialize('2025-06-18'))],
    ['initialize at an old version', 'read', exchange(initialize('2024-11-05'))],
    ['initialize at a version the SDK does not speak', 'full', exchange(initialize('1999-01-01'), '1999-01-01')],
    ['the initialized notification', 'full', exchange({ jsonrpc: '2.0', method: 'notifications/initialized' }, LATEST_PROTOCOL_VERSION)],
    ['ping', 'read', exchange(request('ping', undefined, 'ping-1'))],
    ['tools/list', 'full', exchange(request('tools/list'), '2025-06-18')],
    ['tools/list on the read profile, with a cursor and _meta', 'read', exchange(request('tools/list', { cursor: 'x', _meta: { progressToken: 1 } }))],
    ['a result with citizens’ words', 'full', exchange(request('tools/call', { name: 'svc_post_get', arguments: { id: 'post_1' } }, 0))],
    ['a refusal', 'full', exchange(request('tools/call', { name: 'svc_vote', arguments: {} }, -7))],
    ['a replayed write', 'full', exchange(request('tools/call', { name: 'svc_buy', arguments: { mint: 'm' } }, 'a string id'))],
    ['a replayed refusal', 'full', exchange(request('tools/call', { name: 'svc_post' }))],
    ['a raw reply', 'read', exchange(request('tools/call', { name: 'svc_attest', arguments: {}, _meta: { progressToken: 'p' } }))],
    ['not modified', 'read', exchange(request('tools/call', { name: 'svc_front', arguments: {} }))],
    ['a reply the route sent itself', 'read', exchange(request('tools/call', { name: 'svc_pulse', arguments: {} }))],
    ['an unknown tool', 'full', exchange(request('tools/call', { name: 'svc_nope', arguments: {} }))],
    [
      'arguments holding __proto__ and constructor',
      'full',
      exchange(request('tools/call', { name: 'svc_me', arguments: JSON.parse('{"__proto__":{"x":1},"constructor":"c","1":2,"a":[null]}') as Record<string, unknown> })),
    ],
  ];

  it.each(answered)('%s: the same status, type and bytes', async (_what, profile, message) => {
    const served = servedProfile(routeTable(), profile);
    const direct = wire(await directReply(served, message, callTool));
    expect(direct).toBeDefined();
    expect(direct).toEqual(wire(await sdkReply(served, message, callTool)));
  });

  const declined: Array<[string, McpExchange]> = [
    ['a method it does not serve', exchange(request('resources/list'))],
    ['another notification', exchange({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } })],
    ['a notification with params', exchange({ jsonrpc: '2.0', method: 'notifications/initialized', params: {} })],
    ['a ping with params', exchange(request('ping', {}))],
    ['a task-augmented call', exchange(request('tools/call', { name: 'svc_me', arguments: {}, task: { ttl: 10 } }))],
    ['a member JSON-RPC does not have', exchange({ ...request('tools/call', { name: 'svc_me' }), extra: 1 })],
    ['an id that is not an integer', exchange(request('tools/call', { name: 'svc_me' }, 1.5))],
    ['an id past the safe integers', exchange(request('tools/call', { name: 'svc_me' }, 2 ** 60))],
    ['JSON-RPC 1.0', exchange({ ...request('tools/list'), jsonrpc: '1.0' })],
    ['a response', exchange({ jsonrpc: '2.0', id: 1, result: {} })],
    ['a protocol version the transport refuses', exchange(request('tools/call', { name: 'svc_me', arguments: {} }), '1999-01-01')],
    ['a notification at such a version', exchange({ jsonrpc: '2.0', method: 'notifications/initialized' }, '1999-01-01')],
  ];

  it.each(declined)('leaves %s to the SDK', async (_what, message) => {
    expect(await directReply(servedProfile(routeTable(), 'full'), message, callTool)).toBeUndefined();
  });
});
