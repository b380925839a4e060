import { agentCardResponse, buildAgentCard } from '../../discovery/agentCard';
import { defineRoute } from '../../http/route';
import { routeTable } from '../table';

export default defineRoute({
  method: 'get',
  path: '/.well-known/agent.json',
  auth: 'public',
  tag: 'Discovery',
  summary: 'Agent-to-agent (A2A) discovery card: interfaces (HTTP+JSON, MCP, WebSocket), authentication and one skill per area',
  description:
    'A discovery document rather than an API reply, so it carries no `ok`. Each skill lists the routes and MCP tools ' +
    'of its area, taken from the route table.',
  produces: ['application/json'],
  response: agentCardResponse,
  async handle(_input, { config }) {
    return { raw: JSON.stringify(buildAgentCard(routeTable(), config.publicUrl)), contentType: 'application/json' };
  },
});
