import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { unstorableText } from '@svc/contracts';
import { presentedKey } from '../http/credentials';
import { ApiError, refusalOf } from '../http/errors';
import { envelope, type Outcome } from '../http/pipeline';
import type { RouteInput, RouteResult, RouteSpec } from '../http/route';
import { INTERFACE_VERSION } from '../openapi';
import type { Services } from '../services';
import { citizenTextApart } from './citizenText';
import { instructionsOf } from './conventions';
import { IDEMPOTENCY_ARGUMENT, mcpTools, type McpProfile, type McpTool } from './tools';

export const MCP_SERVER_NAME = 'agent-trading-society';

interface Profile {
  tools: McpTool[];
  instructions: string;
  byName: Map<string, McpTool>;
  listed: Tool[];
}

const profiles = new Map<string, Profile>();

function profileOf(routes: RouteSpec[], profile: McpProfile): Profile {
  let built = profiles.get(profile);
  if (!built) {
    const tools = mcpTools(routes, profile);
    built = {
      tools,
      instructions: instructionsOf(routes, tools, profile),
      byName: new Map(tools.map((t) => [t.name, t])),
      listed: tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema as Tool['inputSchema'],
        annotations: t.annotations,
      })),
    };
    profiles.set(profile, built);
  }
  return built;
}

/**
 * A JSON-RPC error a handler throws: the SDK answers its code and message as they are. An McpError would not do,
 * as its message already reads "MCP error <code>: ...", and the client's McpError prefixes that again.
 */
class JsonRpcRefusal extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

function toolResult(body: Record<string, unknown>, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, ...(isError ? { isError: true } : {}) };
}

function toolError(error: ApiError): CallToolResult {
  const reply = envelope(error);
  const retryAfter = error.headers['Retry-After'];
  if (retryAfter !== undefined) (reply.error as Record<string, unknown>).retry_after_seconds = Number(retryAfter);
  return toolResult(reply, true);
}

function resultOf(outcome: Outcome): CallToolResult {
  switch (outcome.kind) {
    case 'json': {
      const refused = outcome.status >= 400;
      const result = refused ? toolResult(outcome.body, true) : toolResult(citizenTextApart(outcome.body));
      // HTTP says Idempotent-Replayed: true; a tool result says it in its _meta.
      return outcome.replayed ? { ...result, _meta: { idempotent_replayed: true } } : result;
    }
    case 'raw':
      return { content: [{ type: 'text', text: outcome.raw.toString() }] };
    case 'notModified':
      return toolResult({ ok: true, not_modified: true });
    case 'sent':
      return toolResult({ ok: true });
  }
}

interface Split {
  body: Record<string, unknown>;
  query: Record<string, unknown>;
  params: Record<string, unknown>;
  idempotencyKey: string | undefined;
}

/**
 * A tool's arguments, put where the endpoint takes them, as the JSON values they are. Unknown ones go where HTTP
 * would meet them too. Path arguments are checked here, since they make the path.
 */
function split(tool: McpTool, args: Record<string, unknown>): Split {
  const parts: Split = { body: {}, query: {}, params: {}, idempotencyKey: undefined };
  for (const [name, value] of Object.entries(args)) {
    if (name === IDEMPOTENCY_ARGUMENT && tool.route.method === 'post') {
      if (typeof value !== 'string') throw new ApiError(400, 'invalid_request', `${IDEMPOTENCY_ARGUMENT} must be a string`, { field: IDEMPOTENCY_ARGUMENT });
      parts.idempotencyKey = value;
      continue;
    }
    const where = Object.hasOwn(tool.placement, name) ? tool.placement[name] : tool.route.body ? 'body' : 'query';
    // Tool callers send null for an optional argument they leave out; a query string cannot say null at all.
    if (value === null && where === 'query') continue;
    parts[where][name] = value;
  }
  for (const name of Object.keys(tool.route.params?.properties ?? {})) {
    const value = parts.params[name];
    if (value === undefined || value === null || value === '') throw new ApiError(400, 'invalid_request', `${name} is required`, { field: name });
    if (typeof value !== 'string') throw new ApiError(400, 'invalid_request', `${name} must be a string`, { field: name });
    // It is encoded into the path before the pipeline validates anything, and a lone surrogate cannot be encoded.
    const unfit = unstorableText(value);
    if (unfit) throw new ApiError(400, 'invalid_request', `${name} ${unfit}`, { field: name });
  }
  return parts;
}

function concretePath(route: RouteSpec, params: Record<string, unknown>): string {
  return route.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(String(params[name])));
}

/**
 * Serves one MCP POST, stateless: a new server and transport per request, answering in JSON. Each tools/call runs
 * its endpoint's route through the same pipeline as HTTP (key, rate limit, validation, caps, idempotency,
 * read-your-writes), with the key of the MCP request, or none on the read profile.
 */
export async function serveMcp(profile: McpProfile, routes: RouteSpec[], input: RouteInput, services: Services): Promise<RouteResult> {
  const { req, res, pipeline } = input;
  const { byName, listed, instructions } = profileOf(routes, profile);
  const apiKey = profile === 'full' ? presentedKey(req) : undefined;

  const server = new Server({ name: MCP_SERVER_NAME, version: INTERFACE_VERSION }, { capabilities: { tools: { listChanged: false } }, instructions });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new JsonRpcRefusal(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(request.params.name)}; tools/list names them`);
    try {
      const parts = split(tool, request.params.arguments ?? {});
      const outcome = await pipeline.invoke({
        route: tool.route,
        apiKey,
        ip: req.ip ?? 'unknown',
        body: parts.body,
        query: parts.query,
        params: parts.params,
        path: concretePath(tool.route, parts.params),
        idempotencyKey: parts.idempotencyKey,
        idempotencyField: IDEMPOTENCY_ARGUMENT,
        ifNoneMatch: undefined,
        // The MCP request, which carries this one call, was authenticated and counted on the way in.
        counted: true,
        authenticated: apiKey === undefined ? undefined : { agentId: input.agentId },
        req,
        res,
      });
      return resultOf(outcome);
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal) return toolError(refusal);
      const id = (req as { id?: string }).id ?? 'unknown';
      services.log.error({ err: error, reqId: id, tool: tool.name }, 'tool call failed');
      return toolError(new ApiError(500, 'internal', `internal error; quote request id ${id} when reporting it`, { request_id: id }));
    }
  });

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
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(webRequestOf(input), { parsedBody: req.body });
    res.status(response.status);
    const contentType = response.headers.get('content-type');
    if (contentType) res.setHeader('Content-Type', contentType);
    res.end(response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
  } finally {
    await server.close();
  }
  return { sent: true };
}

const PARAMS = new Map<string, { safeParse(value: unknown): { success: boolean } }>([
  ['initialize', InitializeRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

/**
 * A request whose params its method cannot take is answered -32602 here: the SDK would parse them inside the
 * handler and answer -32603, an internal error, for what is the caller's mistake.
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

/**
 * The request as the transport reads it. Only what it looks at is carried over: not the credentials. A plain
 * JSON-RPC client that accepts only application/json is served like the SDK's client: the transport would
 * refuse it 406 unless it also accepts an event stream (typescript-sdk #1944), and it is never sent one here.
 */
function webRequestOf(input: RouteInput): globalThis.Request {
  const { req } = input;
  const headers = new Headers({ accept: 'application/json, text/event-stream', 'content-type': 'application/json' });
  const version = req.get('mcp-protocol-version');
  if (version !== undefined) headers.set('mcp-protocol-version', version);
  return new Request(`http://mcp.local${req.originalUrl}`, { method: 'POST', headers });
}
