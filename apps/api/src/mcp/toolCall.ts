import { ErrorCode, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { unstorableText } from '@svc/contracts';
import { ApiError, refusalOf } from '../http/errors';
import { envelope, type Outcome } from '../http/pipeline';
import type { RouteInput, RouteSpec } from '../http/route';
import type { Services } from '../services';
import { citizenTextApart } from './citizenText';
import { IDEMPOTENCY_ARGUMENT, type McpTool } from './tools';

/**
 * A JSON-RPC error a handler throws: it is answered with its code and message as they are. An McpError would not
 * do, as its message already reads "MCP error <code>: ...", and the client's McpError prefixes that again.
 */
export class JsonRpcRefusal extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** Runs one tools/call: its result, or a JsonRpcRefusal for a call that names no tool of the profile. */
export type CallTool = (name: string, args: Record<string, unknown>) => Promise<CallToolResult>;

/**
 * A result with its members in the order the SDK's result schema writes them (`_meta` first): the SDK re-parses
 * a result before it sends it, and the direct path sends it as built, so both send the same bytes.
 */
function toolResult(body: Record<string, unknown>, isError = false, replayed = false): CallToolResult {
  return {
    ...(replayed ? { _meta: { idempotent_replayed: true } } : {}),
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
    ...(isError ? { isError: true } : {}),
  };
}

function toolError(error: ApiError): CallToolResult {
  const reply = envelope(error);
  const retryAfter = error.headers['Retry-After'];
  if (retryAfter !== undefined) (reply.error as Record<string, unknown>).retry_after_seconds = Number(retryAfter);
  return toolResult(reply, true);
}

export function resultOf(outcome: Outcome): CallToolResult {
  switch (outcome.kind) {
    case 'json': {
      const refused = outcome.status >= 400;
      // HTTP says Idempotent-Replayed: true; a tool result says it in its _meta.
      return toolResult(refused ? outcome.body : citizenTextApart(outcome.body), refused, outcome.replayed);
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
 * The tools/call of one MCP request: each runs its endpoint's route through the same pipeline as HTTP (key, rate
 * limit, validation, caps, idempotency, read-your-writes), with the key of the MCP request, or none on the read
 * profile. A refusal is a tool error carrying the envelope; only a call naming no tool is a JSON-RPC error.
 */
export function toolCaller(byName: ReadonlyMap<string, McpTool>, apiKey: string | undefined, input: RouteInput, services: Services): CallTool {
  const { req, res, pipeline } = input;
  return async (name, args) => {
    const tool = byName.get(name);
    if (!tool) throw new JsonRpcRefusal(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(name)}; tools/list names them`);
    try {
      const parts = split(tool, args);
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
  };
}
