import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { statusOf } from '../../apps/api/src/http/errors';
import { mcpTools } from '../../apps/api/src/mcp/tools';
import { routeTable } from '../../apps/api/src/routes/table';
import { checkedFetch, checkReply } from './openapi';

/** A tools/call result as the official client hands it over. */
export interface ToolReply {
  isError?: boolean;
  structuredContent?: Record<string, any>;
  content: Array<{ type: string; text: string }>;
  _meta?: Record<string, unknown>;
}

/** The official MCP client on `path` (/mcp or /mcp/read), sending `key` when given; every reply is checked against the OpenAPI document. */
export async function connectMcp(base: string, path: string, key?: string): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}${path}`), { requestInit: { headers }, fetch: (url, init) => checkedFetch(String(url), init) }));
  return client;
}

/**
 * A tool result with the citizens' words put back where HTTP has them: every `untrusted_text` spread into the object
 * that carries it. Written without the server's list of fields, so a result equal to the HTTP reply after this
 * lost nothing and changed nothing but where the words sit.
 */
export function wordsInPlace<T>(value: T): T {
  if (Array.isArray(value)) return value.map(wordsInPlace) as T;
  if (value === null || typeof value !== 'object') return value;
  const { untrusted_text: words, ...rest } = value as Record<string, unknown>;
  const back = Object.fromEntries(Object.entries(rest).map(([field, inner]) => [field, wordsInPlace(inner)]));
  if (words === undefined) return back as T;
  const twice = Object.keys(words as object).filter((field) => field in back);
  if (twice.length) throw new Error(`untrusted_text repeats ${twice.join(', ')}, which its object also has`);
  return { ...back, ...(words as object) } as T;
}

/**
 * A tool result is its endpoint's reply: checked, with its citizens' words put back in place, against the OpenAPI
 * document as if HTTP had answered it, at the status the endpoint gives that reply. Its text content is the same JSON.
 */
export function checkToolResult(base: string, name: string, args: Record<string, unknown>, result: { isError?: boolean; structuredContent?: any; content?: unknown }): void {
  const tool = mcpTools(routeTable()).find((t) => t.name === name)!;
  const path = tool.route.path.replace(/\{(\w+)\}/g, (_m, p: string) => encodeURIComponent(String(args[p] ?? 'x')));
  const status = result.isError ? statusOf(result.structuredContent.error.code) : (tool.route.status ?? 200);
  checkReply(tool.route.method, `${base}${path}`, status, 'application/json', JSON.stringify(wordsInPlace(result.structuredContent)));
  const [text] = result.content as Array<{ type: string; text: string }>;
  expect(JSON.parse(text.text)).toEqual(result.structuredContent);
}

/** Calls a tool with the official client; the result is checked as its endpoint's reply. */
export async function callTool(base: string, client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolReply> {
  const result = (await client.callTool({ name, arguments: args })) as ToolReply;
  checkToolResult(base, name, args, result);
  return result;
}

/** A JSON-RPC client as a plain program writes it: one POST per message, `Accept: application/json` only. */
export async function rpc(url: string, message: unknown, headers: Record<string, string> = {}): Promise<{ status: number; contentType: string | null; body: any; bytes: number }> {
  const res = await checkedFetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...headers }, body: typeof message === 'string' ? message : JSON.stringify(message) });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), body: text ? JSON.parse(text) : undefined, bytes: Buffer.byteLength(text) };
}

/** The spec's MCP tool names ("Discovery and tooling"), each mapping to the endpoint of the same name. */
export const SPEC_TOOLS = [
  'register', 'me', 'wallet', 'pulse', 'front', 'search', 'token', 'quote', 'deploy', 'buy', 'sell', 'burn', 'swap', 'transfer', 'post',
  'vote', 'bounty_create', 'bounties', 'submit', 'award', 'memory_set', 'memory_get', 'treasury', 'fee_share', 'ack', 'changes', 'record',
].map((n) => `svc_${n}`);
