import type { JsonSchema } from './validator';

/**
 * A JSON-RPC 2.0 message to /mcp. The MCP transport checks it and answers a malformed one with a JSON-RPC error,
 * so the schema constrains nothing the transport does not: it documents.
 */
export const jsonRpcRequest: JsonSchema = {
  type: 'object',
  description: 'one JSON-RPC 2.0 request or notification (initialize, notifications/initialized, tools/list or tools/call); a batch (an array) is refused with -32600',
  properties: {
    jsonrpc: { description: 'always "2.0"' },
    id: { description: 'a string or integer; absent on a notification' },
    method: { description: 'initialize, notifications/initialized, tools/list or tools/call' },
    params: {
      description: 'for tools/call: {name: "svc_...", arguments: {...}} with the arguments the tool\'s inputSchema describes',
    },
  },
};

export const jsonRpcResponse: JsonSchema = {
  type: 'object',
  required: ['jsonrpc'],
  description: 'the JSON-RPC 2.0 response: `result` (for tools/call: {content, structuredContent, isError?}) or `error` {code, message}',
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer', 'null'] },
    result: {
      type: 'object',
      description: 'for tools/call: content [{type:"text", text}] and structuredContent, the endpoint\'s reply; isError true when it is a refusal {ok:false, error:{code, message}}',
    },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
  },
};
