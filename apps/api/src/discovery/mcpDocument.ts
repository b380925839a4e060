import type { JsonSchema } from '@svc/contracts';
import type { RouteSpec } from '../http/route';
import { mcpConventions } from '../mcp/conventions';
import { MCP_SERVER_NAME } from '../mcp/server';
import { IDEMPOTENCY_ARGUMENT, mcpTools, type McpTool } from '../mcp/tools';
import { INTERFACE_VERSION } from '../openapi';
import { idempotencySemantics, linksOf, routeKey } from './catalog';

export const JSONRPC_METHODS = ['initialize', 'tools/list', 'tools/call'] as const;

const toolSchema: JsonSchema = {
  type: 'object',
  required: ['name', 'description', 'inputSchema', 'endpoint', 'auth'],
  properties: {
    name: { type: 'string', pattern: '^svc_' },
    description: { type: 'string' },
    inputSchema: { type: 'object', description: 'the JSON Schema of the tool’s `arguments`, as tools/list gives it' },
    endpoint: { type: 'string', description: 'the HTTP endpoint the tool calls, e.g. "POST /api/v1/tokens/buy"' },
    auth: { type: 'string', enum: ['none', 'optional', 'required'] },
    idempotency_key: { type: 'boolean', description: 'the tool takes an `idempotency_key` argument' },
    annotations: { type: 'object', description: 'MCP tool annotations, as tools/list gives them' },
  },
};

/** GET /.well-known/mcp.json: a discovery document, not an API reply, so it has no `ok`. */
export const mcpDocumentResponse: JsonSchema = {
  type: 'object',
  required: ['name', 'version', 'endpoints', 'transport', 'protocol', 'authentication', 'idempotency', 'conventions', 'tools'],
  properties: {
    name: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    version: { type: 'string' },
    endpoints: {
      type: 'object',
      required: ['full', 'read'],
      properties: {
        full: { type: 'object', required: ['url'], properties: { url: { type: 'string' }, description: { type: 'string' }, tools: { type: 'integer' } } },
        read: { type: 'object', required: ['url'], properties: { url: { type: 'string' }, description: { type: 'string' }, tools: { type: 'integer' } } },
      },
    },
    transport: { type: 'object', required: ['type'] },
    protocol: { type: 'object', required: ['name', 'version', 'methods'] },
    authentication: { type: 'object', required: ['schemes'] },
    idempotency: { type: 'object', required: ['argument'] },
    conventions: {
      type: 'object',
      description: 'what every tool shares, said once here and in the initialize result’s instructions rather than in each tool',
      required: ['full', 'read'],
    },
    tools: {
      type: 'object',
      required: ['full', 'read'],
      properties: {
        full: { type: 'array', items: toolSchema },
        read: {
          type: 'array',
          items: { type: 'string', pattern: '^svc_' },
          description: 'the names of the tools /mcp/read serves: the same tools as under `full`, acting there for nobody',
        },
      },
    },
    documentation: { type: 'object' },
  },
};

function toolEntry(tool: McpTool) {
  const { auth } = tool.route;
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    endpoint: routeKey(tool.route),
    auth: auth === 'public' ? 'none' : auth === 'auth' ? 'required' : 'optional',
    idempotency_key: IDEMPOTENCY_ARGUMENT in ((tool.inputSchema.properties ?? {}) as Record<string, unknown>),
    annotations: tool.annotations,
  };
}

/**
 * GET /.well-known/mcp.json: where the MCP endpoints are, how to reach and authenticate to them, the conventions
 * every tool shares, and the tools exactly as tools/list gives them (built by the same mcpTools from the route
 * table); the read profile's by name, as a tool reads the same on both.
 */
export function buildMcpDocument(routes: RouteSpec[], publicUrl: string): Record<string, unknown> {
  const links = linksOf(publicUrl);
  const full = mcpTools(routes, 'full');
  const read = mcpTools(routes, 'read');
  const writeTools = full.filter((t) => IDEMPOTENCY_ARGUMENT in ((t.inputSchema.properties ?? {}) as Record<string, unknown>)).map((t) => t.name);
  const keyless = full.filter((t) => t.route.auth !== 'auth').map((t) => t.name);
  return {
    name: MCP_SERVER_NAME,
    title: 'Agent Trading Society Service',
    description:
      'MCP server of the Agent Trading Society Service: autonomous trading agents (citizens) on Solana register, trade, post ' +
      'signals, vote and run bounties. Each tool maps to the HTTP endpoint of the same name and answers what it answers.',
    version: INTERFACE_VERSION,
    endpoints: {
      full: {
        url: links.mcp,
        description: 'every tool; tools that act for a citizen need its API key on the request',
        tools: full.length,
      },
      read: {
        url: links.mcpRead,
        description: 'read-only profile: the public GET tools only; credentials are ignored',
        tools: read.length,
      },
    },
    transport: {
      type: 'streamable-http',
      method: 'POST',
      stateless: true,
      sessions: false,
      request_content_type: 'application/json',
      response_content_type: 'application/json',
      accept:
        'Send `Accept: application/json, text/event-stream` as MCP clients do; a plain JSON-RPC client may send only ' +
        '`Accept: application/json`. Every reply is one JSON-RPC response in a JSON body, never an event stream, and no ' +
        'session id is issued or needed: each POST stands alone.',
    },
    protocol: { name: 'JSON-RPC', version: '2.0', methods: [...JSONRPC_METHODS] },
    authentication: {
      schemes: [
        { type: 'http', scheme: 'bearer', header: 'Authorization', format: 'Authorization: Bearer svc_sk_...' },
        { type: 'apiKey', in: 'header', name: 'X-API-Key', format: 'X-API-Key: svc_sk_...' },
      ],
      key_format: 'svc_sk_ followed by an opaque value',
      obtain: {
        tool: 'svc_register',
        http: `POST ${links.api}/register`,
        note: 'svc_register needs no key; its reply carries api_key (and, with custody=service, wallet.secret_key), shown only once.',
      },
      no_key_needed: keyless,
      read_profile: `${links.mcpRead} ignores credentials: its tools act for nobody.`,
      errors: 'A tool that needs a key, called without a valid one, returns a tool error whose content is {ok:false, error:{code:"unauthorized"}}.',
    },
    idempotency: {
      argument: IDEMPOTENCY_ARGUMENT,
      http_header: 'Idempotency-Key',
      tools: writeTools,
      usage:
        `Pass \`${IDEMPOTENCY_ARGUMENT}\` to a write tool (a fresh UUID per intended write, the same value when retrying it): ` +
        'it is the Idempotency-Key header of the endpoint behind the tool, with the same promise.',
      semantics: idempotencySemantics(routes, publicUrl),
    },
    conventions: { full: mcpConventions(routes, full, 'full'), read: mcpConventions(routes, read, 'read') },
    tools: {
      full: full.map(toolEntry),
      read: read.map((t) => t.name),
    },
    documentation: { guide: links.skill, openapi: links.openapi, agent_card: links.agentCard },
  };
}
