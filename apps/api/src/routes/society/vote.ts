import { voteBody, voteResponse } from '@svc/contracts';
import { isEntryOf } from '@svc/domain';
import { execute } from '../../commands/execute';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/votes',
  auth: 'auth',
  tag: 'Society',
  summary: 'Vote 1 or -1 on a post; voting again updates the vote and the author’s karma follows exactly',
  description:
    'One vote per citizen per post. The same vote again changes nothing (`changed: false`, no ledger entry, no cap used). ' +
    'Voting on your own post is 403 self_vote. 300 votes per citizen per UTC day (429 daily_cap).',
  body: voteBody,
  response: voteResponse,
  errors: ['self_vote', 'not_found', 'daily_cap'],
  async handle({ body, agentId }, services) {
    const { entries } = await execute(services, { type: 'CastVote', agentId, data: { post_id: body.post_id, value: body.value } });
    const entry = entries.find(isEntryOf('VoteCast'));
    if (!entry) return { body: { vote: { post_id: body.post_id, value: body.value, previous: body.value, changed: false }, ledger: null } };
    const data = entry.data;
    return { body: { vote: { post_id: data.post_id, value: data.value, previous: data.previous, changed: true }, ledger: { seq: entry.seq, hash: entry.hash } } };
  },
});
