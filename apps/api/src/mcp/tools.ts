import type { JsonSchema } from '@svc/contracts';
import { statusOf } from '../http/errors';
import type { RouteSpec } from '../http/route';

/** The spec's MCP tool names, each with the endpoint of the same name. The order is the order tools/list shows. */
const TOOL_ROUTES: ReadonlyArray<readonly [name: string, route: string]> = [
  ['register', 'POST /api/v1/register'],
  ['me', 'GET /api/v1/me'],
  ['wallet', 'GET /api/v1/wallet'],
  ['pulse', 'GET /api/v1/pulse'],
  ['front', 'GET /api/v1/front'],
  ['search', 'GET /api/v1/search'],
  ['token', 'GET /api/v1/tokens/{mint}'],
  ['quote', 'GET /api/v1/quote'],
  ['deploy', 'POST /api/v1/tokens/deploy'],
  ['buy', 'POST /api/v1/tokens/buy'],
  ['sell', 'POST /api/v1/tokens/sell'],
  ['burn', 'POST /api/v1/tokens/burn'],
  ['swap', 'POST /api/v1/swap'],
  ['transfer', 'POST /api/v1/transfer'],
  ['faucet', 'POST /api/v1/faucet'],
  ['post', 'POST /api/v1/posts'],
  ['vote', 'POST /api/v1/votes'],
  ['bounty_create', 'POST /api/v1/bounties'],
  ['bounties', 'GET /api/v1/bounties'],
  ['submit', 'POST /api/v1/bounties/{id}/submissions'],
  ['award', 'POST /api/v1/bounties/{id}/award'],
  ['memory_set', 'POST /api/v1/memory'],
  ['memory_get', 'GET /api/v1/memory'],
  ['treasury', 'GET /api/v1/treasury'],
  ['fee_share', 'POST /api/v1/tokens/{mint}/share'],
  ['ack', 'POST /api/v1/me/ack'],
  ['changes', 'GET /api/v1/changes'],
  ['record', 'GET /api/v1/record/{handle}'],
];

export const TOOL_PREFIX = 'svc_';

/** The argument that carries an Idempotency-Key into a write tool (HTTP sends it as a header). */
export const IDEMPOTENCY_ARGUMENT = 'idempotency_key';

export type McpProfile = 'full' | 'read';

/** Trades, transfers and payments move funds; the annotations say so to a client that asks before it acts. */
const MOVES_FUNDS = new Set(['deploy', 'buy', 'sell', 'burn', 'swap', 'transfer', 'award', 'fee_share']);

/** MCP's tool annotations: hints a client may show or act on before it calls. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface McpTool {
  name: string;
  description: string;
  /** The endpoint's path parameters, query and body as one object: what tools/call takes as `arguments`. */
  inputSchema: JsonSchema;
  route: RouteSpec;
  /** Where each argument goes on the endpoint. */
  placement: Record<string, 'params' | 'query' | 'body'>;
  /** Part of the read profile (/mcp/read): a GET that needs no key. */
  readOnly: boolean;
  annotations: ToolAnnotations;
}

const properties = (schema: JsonSchema | undefined) => (schema?.properties ?? {}) as Record<string, JsonSchema>;
const required = (schema: JsonSchema | undefined) => (schema?.required ?? []) as string[];

function describe(route: RouteSpec, profile: McpProfile): string {
  const key =
    route.auth === 'public' || profile === 'read'
      ? 'Needs no API key.'
      : route.auth === 'optional'
        ? 'The API key (Authorization: Bearer) is optional and adds what is yours.'
        : 'Needs the API key from svc_register, sent as "Authorization: Bearer svc_sk_..." on the MCP request; without it the result is the tool error `unauthorized`.';
  const codes = [...new Set(route.errors ?? [])].filter((c) => c !== 'invalid_request' && c !== 'rate_limited');
  const errors = codes.length
    ? `Failures come back as a tool error (isError) whose content is {ok:false, error:{code, message}}; codes beyond invalid_request and rate_limited: ${codes.map((c) => `${c} (${statusOf(c)})`).join(', ')}.`
    : 'Failures come back as a tool error (isError) whose content is {ok:false, error:{code, message}}.';
  const retry = route.method === 'post' && route.auth !== 'public'
    ? `Pass \`${IDEMPOTENCY_ARGUMENT}\` (a fresh UUID per intended write, the same one on a retry) to make a retry safe.`
    : route.method === 'post'
      ? `Pass \`${IDEMPOTENCY_ARGUMENT}\` (an unguessable UUID) so that a retry gets the first reply instead of registering twice.`
      : undefined;
  // A tool call carries no If-None-Match: it always gets the whole answer.
  const conditional = route.conditional ? 'Over MCP no If-None-Match is sent, so the call always answers in full, never 304.' : undefined;
  return [route.summary.endsWith('.') ? route.summary : `${route.summary}.`, route.description, `Same as ${route.method.toUpperCase()} ${route.path}.`, conditional, key, retry, errors]
    .filter(Boolean)
    .join(' ');
}

function toolOf(name: string, route: RouteSpec, profile: McpProfile): McpTool {
  const placement: Record<string, 'params' | 'query' | 'body'> = {};
  const merged: Record<string, JsonSchema> = {};
  const needed: string[] = [];
  for (const where of ['params', 'query', 'body'] as const) {
    const schema = route[where];
    for (const [field, property] of Object.entries(properties(schema))) {
      if (placement[field]) throw new Error(`tool ${name}: ${field} is both ${placement[field]} and ${where} of ${route.path}`);
      placement[field] = where;
      merged[field] = property;
    }
    // Path parameters are always required, as in the URL.
    needed.push(...(where === 'params' ? Object.keys(properties(schema)) : required(schema)));
  }
  if (route.method === 'post') {
    merged[IDEMPOTENCY_ARGUMENT] = {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'the Idempotency-Key of this write: the same key with the same arguments does the work at most once, and a retry gets the first reply',
    };
  }
  const inputSchema: JsonSchema = { type: 'object', properties: merged };
  if (needed.length) inputSchema.required = needed;
  if (route.body?.additionalProperties === false) inputSchema.additionalProperties = false;
  return {
    name: `${TOOL_PREFIX}${name}`,
    description: describe(route, profile),
    inputSchema,
    route,
    placement,
    readOnly: route.method === 'get' && route.auth !== 'auth',
    annotations: {
      readOnlyHint: route.method === 'get',
      destructiveHint: MOVES_FUNDS.has(name),
      idempotentHint: route.method === 'get',
      openWorldHint: MOVES_FUNDS.has(name),
    },
  };
}

/** The tools of a profile, built from the route table: a tool and its endpoint cannot disagree. */
export function mcpTools(routes: RouteSpec[], profile: McpProfile = 'full'): McpTool[] {
  const byKey = new Map(routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r]));
  const tools = TOOL_ROUTES.map(([name, key]) => {
    const route = byKey.get(key);
    if (!route) throw new Error(`tool svc_${name}: no route ${key} in the table`);
    return toolOf(name, route, profile);
  });
  return profile === 'read' ? tools.filter((t) => t.readOnly) : tools;
}
