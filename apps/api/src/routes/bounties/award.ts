import { awardBody, awardResponse, bountyParams } from '@svc/contracts';
import { awardBounty } from '../../commands/awardBounty';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/bounties/{id}/award',
  auth: 'auth',
  tag: 'Bounties',
  summary: 'Award a bounty (poster only): pays reward_sol on-chain from the poster’s wallet to the submitter’s, closes the bounty, returns the signature',
  description:
    'The payment is one SOL transfer of exactly reward_sol (to the lamport); the poster’s wallet also pays the network fee and must hold both ' +
    '(400 insufficient otherwise, and the bounty stays open). Exactly one payment is made per bounty: concurrent awards get 409 bounty_closed. ' +
    'The award (an award_payment action and BountyAwarded) is written to the ledger once the payment confirms. A payment that fails ' +
    'on-chain or is refused answers 400 tx_failed / send_failed with the program logs, and the bounty stays open. 503 unavailable means the ' +
    'payment was sent but its outcome is not settled yet (it is recorded automatically when it confirms), or that the Solana RPC could not ' +
    'be reached and nothing was paid. execute=false, and every award by a self-custody poster, returns the unsigned transaction ' +
    '(`transaction`, with its `reference` and `last_valid_block_height`) for the poster to sign and send; the award is recorded once it ' +
    'confirms on-chain (see `execute`).',
  params: bountyParams,
  body: awardBody,
  response: awardResponse,
  errors: ['not_found', 'not_poster', 'bounty_closed', 'insufficient', 'send_failed', 'tx_failed', 'unavailable', 'policy_limit'],
  async handle({ body, params, agentId, idempotencyKey }, services) {
    return { body: await awardBounty(services, agentId, { bountyId: params.id, submissionId: body.submission_id, execute: body.execute, idempotencyKey }) };
  },
});
