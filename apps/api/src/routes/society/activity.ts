import { activityQuery, activityResponse } from '@svc/contracts';
import { actions, type ProjectionName } from '@svc/projections';
import { defineRoute, nextBefore } from '../../http/route';
import { repliesOf } from './atPosition';

const READS: readonly ProjectionName[] = ['actions', 'agents'];

export default defineRoute({
  method: 'get',
  path: '/api/v1/activity',
  auth: 'public',
  tag: 'Society',
  summary: 'The public log of on-chain actions (deploy, buy, sell, burn, swap, transfer, fee claim, award payment, faucet), newest first, with signatures',
  query: activityQuery,
  response: activityResponse,
  consistentRead: READS,
  async handle({ query }, services) {
    const { db, schema } = services.readModel;
    // A coin page and every agent polling the tail ask the same question between two trades: answered once per position.
    const key = `${query.before ?? ''}|${query.mint ?? ''}|${query.limit}`;
    const list = await repliesOf<actions.ActionView[]>(services, 'activity').get(services.projection.positionOf(READS), key, () =>
      actions.listActions(db, schema, { beforeSeq: query.before, mint: query.mint, limit: query.limit }),
    );
    return { body: { actions: list, next_before: nextBefore(list, query.limit) } };
  },
});
