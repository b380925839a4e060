import { bountyParams, getBountyResponse } from '@svc/contracts';
import { bounties } from '@svc/projections';
import { notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/bounties/{id}',
  auth: 'public',
  tag: 'Bounties',
  summary: 'A bounty with all its submissions so far, in submission order',
  params: bountyParams,
  response: getBountyResponse,
  errors: ['not_found'],
  consistentRead: ['bounties', 'agents'],
  async handle({ params }, { readModel }) {
    const { db, schema } = readModel;
    const bounty = await bounties.findBounty(db, schema, params.id);
    if (!bounty) throw notFound(`bounty ${params.id}`);
    return { body: { bounty, submissions: await bounties.submissionsOf(db, schema, bounty.id) } };
  },
});
