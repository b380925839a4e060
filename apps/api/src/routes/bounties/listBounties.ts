import { listBountiesQuery, listBountiesResponse } from '@svc/contracts';
import { bounties } from '@svc/projections';
import { defineRoute, nextBefore } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/bounties',
  auth: 'public',
  tag: 'Bounties',
  summary: 'Bounties, newest first, by `status` (open by default, awarded, or all); page with `before`',
  query: listBountiesQuery,
  response: listBountiesResponse,
  consistentRead: ['bounties', 'agents'],
  async handle({ query }, { readModel }) {
    const list = await bounties.listBounties(readModel.db, readModel.schema, { status: query.status, beforeSeq: query.before, limit: query.limit });
    return { body: { bounties: list, next_before: nextBefore(list, query.limit) } };
  },
});
