import { activityQuery, activityResponse } from '@svc/contracts';
import { actions } from '@svc/projections';
import { defineRoute, nextBefore } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/activity',
  auth: 'public',
  tag: 'Society',
  summary: 'The public log of on-chain actions (deploy, buy, sell, burn, swap, transfer, fee claim, award payment, faucet), newest first, with signatures',
  query: activityQuery,
  response: activityResponse,
  consistentRead: ['actions', 'agents'],
  async handle({ query }, { readModel }) {
    const list = await actions.listActions(readModel.db, readModel.schema, { beforeSeq: query.before, mint: query.mint, limit: query.limit });
    return { body: { actions: list, next_before: nextBefore(list, query.limit) } };
  },
});
