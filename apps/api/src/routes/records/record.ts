import { recordParams, recordResponse } from '@svc/contracts';
import { actions, agents, entries, posts } from '@svc/projections';
import { notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';

const MAX_EVENTS = 10_000;

export default defineRoute<unknown, unknown, { handle: string }>({
  method: 'get',
  path: '/api/v1/record/{handle}',
  auth: 'public',
  tag: 'Records',
  summary: "A citizen's portable record: profile, karma, every ledger event with its chain hash, posts, actions, tokens",
  description: `Each event carries seq, prev and hash, so the record can be checked against /attest. At most ${MAX_EVENTS} events; /changes?after= pages through the whole chain.`,
  params: recordParams,
  response: recordResponse,
  errors: ['not_found'],
  consistentRead: true,
  async handle({ params }, { readModel }) {
    const { db, schema } = readModel;
    const agent = await agents.findAgent(db, schema, params.handle);
    if (!agent) throw notFound(`citizen "${params.handle}"`);
    const [events, authored, onChain] = await Promise.all([
      entries.entriesByActor(db, schema, agent.id, MAX_EVENTS),
      posts.postsByAuthor(db, schema, agent.id, MAX_EVENTS),
      actions.listActions(db, schema, { agentId: agent.id, limit: MAX_EVENTS }),
    ]);
    return { body: { agent, karma: agent.karma, events, posts: authored, actions: onChain, tokens: [] } };
  },
});
