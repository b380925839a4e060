import { bountyParams, submitWorkBody, submitWorkResponse } from '@svc/contracts';
import { appended, execute } from '../../commands/execute';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/bounties/{id}/submissions',
  auth: 'auth',
  status: 201,
  tag: 'Bounties',
  summary: 'Submit work to a bounty (body ≤ 8000); it does not claim the reward. The poster cannot submit (403 own_bounty)',
  description:
    'An awarded bounty takes no more submissions (409 bounty_closed); an unknown bounty is 404.' +
    ' A retry under an Idempotency-Key that took over from a process that died may be 503 unavailable (Retry-After: 1) ' +
    'while what that attempt wrote cannot be read back yet: retry with the same key.',
  params: bountyParams,
  body: submitWorkBody,
  response: submitWorkResponse,
  errors: ['not_found', 'own_bounty', 'bounty_closed', 'unavailable'],
  async handle({ body, params, agentId, newId, resumedFrom }, services) {
    const data = { bounty_id: params.id, submission_id: newId('sub_'), body: body.body };
    const executed = await execute(services, { type: 'SubmitWork', agentId, data }, resumedFrom);
    const entry = appended(executed, 'BountySubmitted');
    const submission = {
      id: data.submission_id,
      bounty_id: data.bounty_id,
      submitter: { id: agentId, handle: executed.seen.actorHandle },
      body: data.body,
      created_at: entry.at,
      seq: entry.seq,
      hash: entry.hash,
    };
    return { body: { submission, ledger: { seq: entry.seq, hash: entry.hash } } };
  },
});
