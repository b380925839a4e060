import { recordParams, recordQuery, recordResponse } from '@svc/contracts';
import { isEntryOf } from '@svc/domain';
import { actions, agents, anchors, entries, posts, tokens } from '@svc/projections';
import { notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';
import { anchorReply } from '../../records/anchorView';

export default defineRoute({
  method: 'get',
  path: '/api/v1/record/{handle}',
  auth: 'public',
  tag: 'Records',
  summary: "A citizen's portable record: profile, karma, every ledger event with its chain hash, posts, actions, tokens",
  description:
    'Each event carries seq, prev and hash, so the record can be checked against /attest. The record comes in pages of ' +
    '`limit` events, oldest first: `posts` and `actions` are those among the page’s events, and `next_after` continues, ' +
    'so walking the pages gives every event, post and action exactly once. Each event names the first anchor on Solana at or after it ' +
    '(`anchor`): hashing forward from the event to that anchor’s seq over GET /api/v1/changes must give the hash its memo carries.',
  params: recordParams,
  query: recordQuery,
  response: recordResponse,
  errors: ['not_found'],
  consistentRead: ['agents', 'entries', 'posts', 'actions', 'tokens', 'anchors'],
  async handle({ params, query }, services) {
    const { db, schema } = services.readModel;
    const agent = await agents.findAgent(db, schema, params.handle);
    if (!agent) throw notFound(`citizen "${params.handle}"`);
    const after = query.after ?? -1;
    const events = await entries.entriesByActor(db, schema, agent.id, { afterSeq: after, limit: query.limit + 1 });
    const hasMore = events.length > query.limit;
    const page = events.slice(0, query.limit);
    const postIds = page.filter(isEntryOf('PostCreated')).map((e) => e.data.post_id);
    const recorded = page.filter(isEntryOf('ActionRecorded'));
    const actionCount = recorded.length;
    const deployedMints = recorded.flatMap((e) => (e.data.action === 'deploy' && typeof e.data.details.mint === 'string' ? [e.data.details.mint] : []));
    const last = page.at(-1)?.seq ?? after;
    const [authored, onChain, deployed, covering] = await Promise.all([
      posts.postsByIds(db, schema, postIds),
      actionCount === 0 ? [] : actions.listActions(db, schema, { agentId: agent.id, afterSeq: after, beforeSeq: last + 1, limit: actionCount }),
      tokens.tokensByMints(db, schema, deployedMints),
      anchors.anchorsCovering(db, schema, page.map((e) => e.seq)),
    ]);
    const anchored = page.map((e) => {
      const anchor = covering.get(e.seq);
      return { ...e, anchor: anchor ? anchorReply(anchor, services) : null };
    });
    return {
      body: { agent, karma: agent.karma, events: anchored, posts: authored, actions: onChain, tokens: deployed, next_after: hasMore ? last : null, has_more: hasMore },
    };
  },
});
