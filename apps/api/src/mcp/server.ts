import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { presentedKey } from '../http/credentials';
import type { RouteInput, RouteResult, RouteSpec } from '../http/route';
import type { Services } from '../services';
import { instructionsOf } from './conventions';
import { directReply } from './direct';
import { sdkReply, type McpExchange, type McpReply, type ServedProfile } from './sdkServer';
import { toolCaller } from './toolCall';
import { mcpTools, type McpProfile } from './tools';

export { MCP_SERVER_NAME } from './sdkServer';

const profiles = new Map<string, ServedProfile>();

/** A profile's tools, instructions and tools/list result, built once per process. */
export function servedProfile(routes: RouteSpec[], profile: McpProfile): ServedProfile {
  let built = profiles.get(profile);
  if (!built) {
    const tools = mcpTools(routes, profile);
    const listed = tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as Tool['inputSchema'],
      annotations: t.annotations,
    }));
    built = {
      byName: new Map(tools.map((t) => [t.name, t])),
      listed,
      instructions: instructionsOf(routes, tools, profile),
      toolsListed: JSON.stringify({ tools: listed }),
    };
    profiles.set(profile, built);
  }
  return built;
}

/**
 * Serves one MCP POST, stateless, answering in JSON: the messages agents send all the time directly, anything else
 * with the SDK's Server and transport. Both run each tools/call through the endpoint's route (toolCall.ts).
 */
export async function serveMcp(profile: McpProfile, routes: RouteSpec[], input: RouteInput, services: Services): Promise<RouteResult> {
  const { req, res } = input;
  // One message per POST, as MCP 2025-06-18 has it: a batch would run many tool calls on one request's count
  // of the rate limit, and the transport answers only the first of two requests that share an id.
  if (Array.isArray(req.body)) {
    res.status(400).json({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message: 'batches are not supported: send one JSON-RPC message per POST' } });
    return { sent: true };
  }
  const refused = invalidParams(req.body);
  if (refused) {
    res.status(200).json(refused);
    return { sent: true };
  }
  const served = servedProfile(routes, profile);
  const callTool = toolCaller(served.byName, profile === 'full' ? presentedKey(req) : undefined, input, services);
  const exchange: McpExchange = { message: req.body, protocolVersion: req.get('mcp-protocol-version'), url: req.originalUrl };
  send(input, (await directReply(served, exchange, callTool)) ?? (await sdkReply(served, exchange, callTool)));
  return { sent: true };
}

function send({ res }: RouteInput, reply: McpReply): void {
  res.status(reply.status);
  if (reply.contentType) res.setHeader('Content-Type', reply.contentType);
  res.end(reply.body);
}

const PARAMS = new Map<string, { safeParse(value: unknown): { success: boolean } }>([
  ['initialize', InitializeRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

/**
 * A request whose params its method cannot take is answered -32602 here: the SDK would parse them inside the
 * handler and answer -32603, an internal error, for what is the caller's mistake. The direct path relies on it:
 * the requests it answers have params the SDK's own schemas accept.
 */
function invalidParams(message: unknown): Record<string, unknown> | undefined {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return undefined;
  const { jsonrpc, id, method } = message as { jsonrpc?: unknown; id?: unknown; method?: unknown };
  const schema = typeof method === 'string' ? PARAMS.get(method) : undefined;
  // Anything that is not a well-formed request is the transport's to refuse.
  if (jsonrpc !== '2.0' || !schema || (typeof id !== 'string' && typeof id !== 'number') || schema.safeParse(message).success) return undefined;
  const shape = method === 'tools/call' ? '{name: string, arguments?: object}' : method === 'initialize' ? '{protocolVersion, capabilities, clientInfo: {name, version}}' : 'an object, if any';
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `invalid params for ${method}: expected ${shape}` } };
}
