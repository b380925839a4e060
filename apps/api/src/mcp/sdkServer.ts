import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { INTERFACE_VERSION } from '../openapi';
import type { CallTool } from './toolCall';
import type { McpTool } from './tools';

export const MCP_SERVER_NAME = 'agent-trading-society';
export const SERVER_INFO = { name: MCP_SERVER_NAME, version: INTERFACE_VERSION };
export const CAPABILITIES = { tools: { listChanged: false } };

/** What a profile (/mcp or /mcp/read) serves, built once per process. */
export interface ServedProfile {
  byName: ReadonlyMap<string, McpTool>;
  listed: Tool[];
  instructions: string;
  /** The tools/list result as JSON, serialized once: the direct path sends it as it is. */
  toolsListed: string;
}

/** One MCP POST as both paths read it: its parsed body and the headers the protocol looks at. */
export interface McpExchange {
  message: unknown;
  /** The Mcp-Protocol-Version header, if sent. */
  protocolVersion: string | undefined;
  /** The path and query the client posted to. */
  url: string;
}

export interface McpReply {
  status: number;
  contentType?: string;
  body?: string | Buffer;
}

/**
 * A Server builds an ajv instance with every format unless it is given one, which cost about 4 ms per request:
 * one instance serves every Server of the process. A tools-only server never validates with it.
 */
const schemaValidator = new AjvJsonSchemaValidator();

/**
 * Answers one message with the SDK itself: a new Server and stateless transport for this message alone, as the
 * transport requires (it refuses to be reused across requests, since clients' JSON-RPC ids would collide). The
 * direct path (direct.ts) answers the messages agents send all the time; this one answers everything else,
 * malformed messages included, as the SDK does.
 */
export async function sdkReply(profile: ServedProfile, exchange: McpExchange, callTool: CallTool): Promise<McpReply> {
  const server = new Server(SERVER_INFO, { capabilities: CAPABILITIES, instructions: profile.instructions, jsonSchemaValidator: schemaValidator });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: profile.listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => callTool(request.params.name, request.params.arguments ?? {}));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(webRequestOf(exchange), { parsedBody: exchange.message });
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? undefined,
      body: response.body ? Buffer.from(await response.arrayBuffer()) : undefined,
    };
  } finally {
    await server.close();
  }
}

/**
 * The request as the transport reads it. Only what it looks at is carried over: not the credentials. A plain
 * JSON-RPC client that accepts only application/json is served like the SDK's client: the transport would
 * refuse it 406 unless it also accepts an event stream (typescript-sdk #1944), and it is never sent one here.
 */
function webRequestOf({ protocolVersion, url }: McpExchange): globalThis.Request {
  const headers = new Headers({ accept: 'application/json, text/event-stream', 'content-type': 'application/json' });
  if (protocolVersion !== undefined) headers.set('mcp-protocol-version', protocolVersion);
  return new Request(`http://mcp.local${url}`, { method: 'POST', headers });
}
