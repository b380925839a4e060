import Ajv from 'ajv';
import { ErrorCode, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { CAPABILITIES, SERVER_INFO, type McpExchange, type McpReply, type ServedProfile } from './sdkServer';
import type { CallTool } from './toolCall';

/**
 * The messages agents send all the time, answered without the SDK: initialize, tools/list, tools/call, ping and
 * notifications/initialized, each well-formed as the SDK's transport would accept it. They get the bytes the SDK's
 * Server would send (test/unit/mcp-direct.unit.spec.ts holds the two side by side); anything else is left to the
 * SDK (sdkServer.ts), which answers malformed messages, other methods, task requests and unsupported protocol
 * versions as it always has. A Server and transport per message cost more than the tool call on /mcp; the
 * transport cannot be shared, as it keys replies by the clients' own JSON-RPC ids.
 */

const ajv = new Ajv({ strict: true });

const ID = { anyOf: [{ type: 'string' }, { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }] };

/** A request the SDK's transport takes (its schema is strict). Its params were checked by the SDK's own schema first (invalidParams). */
const isRequest = ajv.compile<{ jsonrpc: '2.0'; id: string | number; method: 'initialize' | 'tools/list' | 'tools/call'; params?: Record<string, unknown> }>({
  type: 'object',
  required: ['jsonrpc', 'id', 'method'],
  additionalProperties: false,
  properties: {
    jsonrpc: { const: '2.0' },
    id: ID,
    method: { enum: ['initialize', 'tools/list', 'tools/call'] },
    // A task-augmented request is the SDK's to refuse.
    params: { type: 'object', properties: { task: false } },
  },
});

const isPing = ajv.compile<{ jsonrpc: '2.0'; id: string | number; method: 'ping' }>({
  type: 'object',
  required: ['jsonrpc', 'id', 'method'],
  additionalProperties: false,
  properties: { jsonrpc: { const: '2.0' }, id: ID, method: { const: 'ping' } },
});

const isInitialized = ajv.compile({
  type: 'object',
  required: ['jsonrpc', 'method'],
  additionalProperties: false,
  properties: { jsonrpc: { const: '2.0' }, method: { const: 'notifications/initialized' } },
});

/** The transport refuses (400) any message but initialize that names a protocol version it does not speak. */
const versionServed = (version: string | undefined) => version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version);

/** JSON-RPC's reply as the SDK writes it: `result` first. */
const resultReply = (id: string | number, resultJson: string): McpReply => ({
  status: 200,
  contentType: 'application/json',
  body: `{"result":${resultJson},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`,
});

/** A handler's error as the SDK answers it. */
function errorReply(id: string | number, error: unknown): McpReply {
  const { code, message, data } = error as { code?: unknown; message?: string; data?: unknown };
  const body = {
    jsonrpc: '2.0',
    id,
    error: { code: Number.isSafeInteger(code) ? code : ErrorCode.InternalError, message: message ?? 'Internal error', ...(data !== undefined && { data }) },
  };
  return { status: 200, contentType: 'application/json', body: JSON.stringify(body) };
}

/** The SDK's records of arguments never hold `__proto__`: it drops the key, and so does this path. */
function ownArguments(args: Record<string, unknown>): Record<string, unknown> {
  if (!Object.hasOwn(args, '__proto__')) return args;
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) if (name !== '__proto__') copy[name] = value;
  return copy;
}

function initializeResult(profile: ServedProfile, requested: unknown): string {
  const protocolVersion = typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
  return JSON.stringify({ protocolVersion, capabilities: CAPABILITIES, serverInfo: SERVER_INFO, ...(profile.instructions && { instructions: profile.instructions }) });
}

/** The reply to a message this path answers, or undefined for one the SDK must answer. */
export async function directReply(profile: ServedProfile, exchange: McpExchange, callTool: CallTool): Promise<McpReply | undefined> {
  const { message, protocolVersion } = exchange;
  if (isInitialized(message)) return versionServed(protocolVersion) ? { status: 202 } : undefined;
  if (isPing(message)) return versionServed(protocolVersion) ? resultReply(message.id, '{}') : undefined;
  if (!isRequest(message)) return undefined;
  const { id, method, params = {} } = message;
  if (method === 'initialize') return resultReply(id, initializeResult(profile, params.protocolVersion));
  if (!versionServed(protocolVersion)) return undefined;
  if (method === 'tools/list') return resultReply(id, profile.toolsListed);
  try {
    const result = await callTool(params.name as string, ownArguments((params.arguments ?? {}) as Record<string, unknown>));
    return resultReply(id, JSON.stringify(result));
  } catch (error) {
    return errorReply(id, error);
  }
}
