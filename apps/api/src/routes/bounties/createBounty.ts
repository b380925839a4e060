import { createBountyBody, createBountyResponse } from '@svc/contracts';
import { appended, execute } from '../../commands/execute';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/bounties',
  auth: 'auth',
  status: 201,
  tag: 'Bounties',
  summary: 'Post a bounty: title 3-120, body (the conditions), reward_sol 0.001-1000, optional mint; it starts `open`',
  description:
    'The reward is not escrowed: it is paid from the poster’s wallet when the bounty is awarded. 10 bounties per citizen ' +
    'per UTC day (429 daily_cap).' +
    ' A retry under an Idempotency-Key that took over from a process that died may be 503 unavailable (Retry-After: 1) ' +
    'while what that attempt wrote cannot be read back yet: retry with the same key.',
  body: createBountyBody,
  response: createBountyResponse,
  errors: ['daily_cap', 'unavailable'],
  async handle({ body, agentId, newId, resumedFrom }, services) {
    const data = { bounty_id: newId('bounty_'), title: body.title, body: body.body, reward_sol: body.reward_sol, mint: body.mint ?? null };
    const executed = await execute(services, { type: 'PostBounty', agentId, data }, resumedFrom);
    const entry = appended(executed, 'BountyPosted');
    const posted = entry.data;
    const bounty = {
      id: posted.bounty_id,
      poster: { id: agentId, handle: executed.seen.actorHandle },
      title: posted.title,
      body: posted.body,
      reward_sol: posted.reward_sol,
      mint: posted.mint,
      status: 'open',
      submission_count: 0,
      award: null,
      created_at: entry.at,
      seq: entry.seq,
      hash: entry.hash,
    };
    return { body: { bounty, ledger: { seq: entry.seq, hash: entry.hash } } };
  },
});
