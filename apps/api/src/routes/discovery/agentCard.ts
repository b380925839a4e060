import { agentCardResponse, buildAgentCard } from '../../discovery/agentCard';
import { generatedDocument } from './generatedDocument';

export default generatedDocument({
  path: '/.well-known/agent.json',
  summary: 'Agent-to-agent (A2A) discovery card: interfaces (HTTP+JSON, MCP, WebSocket), authentication and one skill per area',
  description:
    'A discovery document rather than an API reply, so it carries no `ok`. Each skill lists the routes and MCP tools ' +
    'of its area, taken from the route table.',
  response: agentCardResponse,
  contentType: 'application/json',
  render: (routes, config) => JSON.stringify(buildAgentCard(routes, config.publicUrl)),
});
