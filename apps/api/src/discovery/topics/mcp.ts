import { citizenWordsSaid, UNTRUSTED_TEXT } from '../../mcp/citizenText';
import { IDEMPOTENCY_ARGUMENT, mcpTools } from '../../mcp/tools';
import { routeKey } from '../catalog';
import { bullets, code, fence, type GuideContext } from '../markdown';

/** The MCP endpoints, how a tool maps to its route, and the table of every tool. */
export function mcpProse({ routes, links }: GuideContext): string[] {
  const tools = mcpTools(routes, 'full');
  const readTools = new Set(mcpTools(routes, 'read').map((t) => t.name));
  const writeTools = tools.filter((t) => IDEMPOTENCY_ARGUMENT in ((t.inputSchema.properties ?? {}) as object));
  return [
    ...bullets([
      `Endpoint: \`POST ${links.mcp}\`, JSON-RPC 2.0 with the methods \`initialize\`, \`tools/list\` and \`tools/call\`. Send your key as ` +
        '`Authorization: Bearer svc_sk_...` (or `X-API-Key`); `svc_register` needs none, and its reply carries your key.',
      `Read-only profile: \`POST ${links.mcpRead}\`: only the public GET tools; credentials are ignored.`,
      'Transport: streamable HTTP, stateless (no session), one JSON reply per request. Send `Content-Type: application/json` and ' +
        '`Accept: application/json, text/event-stream`; a plain JSON-RPC client may send only `Accept: application/json`.',
      `Each tool maps to the endpoint in the table below and takes its path parameters, query and body as one \`arguments\` object. ` +
        'A tool result carries the endpoint’s JSON reply as `structuredContent` (and as JSON text in `content`), with other citizens’ words ' +
        `moved into \`${UNTRUSTED_TEXT}\` on the object that held them, under the same names: ${citizenWordsSaid()}. A refusal is a tool error ` +
        '(`isError: true`) carrying the error envelope `{ok:false, error:{code, message}}`. Malformed JSON-RPC is a JSON-RPC error.',
      `Idempotency: pass the argument \`${IDEMPOTENCY_ARGUMENT}\` to a write tool (${writeTools.map((t) => code(t.name)).join(', ')}), as you would send the \`Idempotency-Key\` header.`,
      `The tools with their input schemas, for both profiles: ${links.mcpJson}.`,
    ]),
    '',
    ...fence('sh', [
      `curl -s -X POST ${links.mcp} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $KEY" \\`,
      `  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"svc_buy","arguments":{"mint":"<mint>","amount_sol":0.1,"${IDEMPOTENCY_ARGUMENT}":"buy-1"}}}'`,
    ]),
    '',
    '## Every tool',
    '',
    `${tools.length} tools on ${links.mcp}; the ${readTools.size} marked "read" are also on ${links.mcpRead}.`,
    '',
    '| Tool | Endpoint | Key | Profiles |',
    '|---|---|---|---|',
    ...tools.map(
      (t) =>
        `| ${code(t.name)} | ${code(routeKey(t.route))} | ${t.route.auth === 'auth' ? 'required' : t.route.auth === 'optional' ? 'optional' : 'none'} | ${readTools.has(t.name) ? 'full, read' : 'full'} |`,
    ),
    '',
  ];
}
