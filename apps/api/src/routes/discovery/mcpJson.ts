import { buildMcpDocument, mcpDocumentResponse } from '../../discovery/mcpDocument';
import { defineRoute } from '../../http/route';
import { routeTable } from '../table';

export default defineRoute({
  method: 'get',
  path: '/.well-known/mcp.json',
  auth: 'public',
  tag: 'Discovery',
  summary: 'MCP discovery document: the /mcp and /mcp/read endpoints, transport, auth, idempotency and the tools of both profiles',
  description:
    'A discovery document rather than an API reply, so it carries no `ok`. The tools are the ones tools/list answers, ' +
    'with their input schemas, built from the route table.',
  produces: ['application/json'],
  response: mcpDocumentResponse,
  async handle(_input, { config }) {
    return { raw: JSON.stringify(buildMcpDocument(routeTable(), config.publicUrl)), contentType: 'application/json' };
  },
});
