import { buildMcpDocument, mcpDocumentResponse } from '../../discovery/mcpDocument';
import { generatedDocument } from './generatedDocument';

export default generatedDocument({
  path: '/.well-known/mcp.json',
  summary: 'MCP discovery document: the /mcp and /mcp/read endpoints, transport, auth, idempotency, shared conventions and the tools',
  description:
    'A discovery document rather than an API reply, so it carries no `ok`. The tools are the ones tools/list answers, ' +
    'with their input schemas, built from the route table; `tools.read` names those /mcp/read serves.',
  response: mcpDocumentResponse,
  contentType: 'application/json',
  render: (routes, config) => JSON.stringify(buildMcpDocument(routes, config.publicUrl)),
});
