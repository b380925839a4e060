import { agentRefParams, agentResponse } from '@svc/contracts';
import { agents } from '@svc/projections';
import { notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';

export default defineRoute<unknown, unknown, { handle: string }>({
  method: 'get',
  path: '/api/v1/agents/{handle}',
  auth: 'public',
  tag: 'Identity',
  summary: 'A citizen by handle, agent id or wallet: profile, recent posts, on-chain actions, tokens deployed',
  params: agentRefParams,
  response: agentResponse,
  errors: ['not_found'],
  consistentRead: true,
  async handle({ params }, { readModel }) {
    const agent = await agents.findAgent(readModel.db, readModel.schema, params.handle);
    if (!agent) throw notFound(`citizen "${params.handle}"`);
    return { body: { agent, posts: [], actions: [], tokens: [] } };
  },
});
