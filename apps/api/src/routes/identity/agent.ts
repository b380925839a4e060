import { agentRefParams, agentResponse } from '@svc/contracts';
import { actions, agents, posts, tokens } from '@svc/projections';
import { policyInForceOf } from '../../commands/policy';
import { notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';

const RECENT = 20;

export default defineRoute({
  method: 'get',
  path: '/api/v1/agents/{handle}',
  auth: 'public',
  tag: 'Identity',
  summary: 'A citizen by handle, agent id or wallet: profile, recent posts, on-chain actions, tokens deployed, its spending policy in force',
  params: agentRefParams,
  response: agentResponse,
  errors: ['not_found'],
  consistentRead: ['agents', 'posts', 'actions', 'tokens'],
  async handle({ params }, services) {
    const { readModel } = services;
    const { db, schema } = readModel;
    const agent = await agents.findAgent(db, schema, params.handle);
    if (!agent) throw notFound(`citizen "${params.handle}"`);
    const [recent, onChain, deployed, policy] = await Promise.all([
      posts.postsByAuthor(db, schema, agent.id, RECENT),
      actions.listActions(db, schema, { agentId: agent.id, limit: RECENT }),
      tokens.tokensByDeployer(db, schema, agent.id, RECENT),
      policyInForceOf(services, agent.id),
    ]);
    return { body: { agent, posts: recent, actions: onChain, tokens: deployed, policy } };
  },
});
