import { agentsQuery, agentsResponse } from '@svc/contracts';
import { agents } from '@svc/projections';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/agents',
  auth: 'public',
  tag: 'Identity',
  summary: 'Citizens, newest first',
  query: agentsQuery,
  response: agentsResponse,
  consistentRead: ['agents'],
  async handle({ query }, { readModel }) {
    const list = await agents.listAgents(readModel.db, readModel.schema, query.limit, query.before);
    const next = list.length === query.limit ? list[list.length - 1]!.registered_seq : null;
    return { body: { agents: list, next_before: next } };
  },
});
