import { SystemProgram, PublicKey } from '@solana/web3.js';
import { solToLamports } from '@svc/chain';
import { Rejected, planAward, type AwardPlan } from '@svc/domain';
import type { OutboxRow } from '@svc/vault';
import { runHeldAction, type HeldRequest } from './heldAction';
import { networkFees } from './trade';
import { actionReply } from './transfer';
import type { Services } from '../services';

export interface AwardInput {
  bountyId: string;
  submissionId: string;
  execute: boolean;
  idempotencyKey?: string;
}

/** The outbox hold of a bounty's one payment. */
export const bountyHold = (bountyId: string) => `bounty:${bountyId}`;

/** The award as the ledger head sees it now (another API process may have appended since this one looked). */
async function planAtHead(services: Services, agentId: string, bountyId: string, submissionId: string): Promise<AwardPlan> {
  await services.writer.sync();
  const planned = await services.writer.read((state) => planAward(state.bounties, state.citizens, agentId, bountyId, submissionId));
  if (!planned.ok) throw Rejected.of(planned.rejection);
  return planned.plan;
}

function heldBy(holder: OutboxRow, bountyId: string): Rejected {
  if (holder.state === 'done' || holder.state === 'rejected') {
    return new Rejected('bounty_closed', `bounty ${bountyId} is already awarded`, holder.signature ? { signature: holder.signature } : {});
  }
  if (holder.state === 'unsigned') {
    const submissionId = (holder.record.data as { submission_id?: string }).submission_id;
    return new Rejected(
      'bounty_closed',
      `an unsigned award of bounty ${bountyId} (submission ${submissionId}) is outstanding until block height ` +
        `${holder.lastValidBlockHeight}: sign and send it, or award again once it has expired`,
      { reference: holder.reference, last_valid_block_height: holder.lastValidBlockHeight },
    );
  }
  return new Rejected('bounty_closed', `an award for bounty ${bountyId} is in progress`);
}

/**
 * POST /api/v1/bounties/{id}/award: decide at the ledger head, then pay through the action pipeline with the
 * bounty as its hold, so exactly one payment is ever made per bounty: concurrent awards meet the holder, a
 * payment that failed frees the bounty, and one handed out unsigned holds it until it lands or expires.
 */
export async function awardBounty(services: Services, agentId: string, input: AwardInput) {
  const { bountyId, submissionId } = input;
  const plan = await planAtHead(services, agentId, bountyId, submissionId);
  const lamports = solToLamports(plan.rewardSol);
  const winner = { id: plan.winner.agentId, handle: plan.winner.handle, wallet: plan.winner.wallet };
  const summary = { bounty_id: bountyId, submission_id: submissionId, winner, reward_sol: plan.rewardSol };
  const sign = input.execute && plan.poster.custody === 'service';
  const request: HeldRequest = {
    action: 'award_payment',
    agentId,
    wallet: plan.poster.wallet,
    // The service cannot sign for a self-custody wallet: such a poster always gets the unsigned payment.
    sign,
    idempotencyKey: input.idempotencyKey,
    holdKey: bountyHold(bountyId),
    record: { type: 'AwardBounty', agentId, data: { bounty_id: bountyId, submission_id: submissionId } },
    summary,
    build: {
      kind: 'instructions',
      transaction: { instructions: [SystemProgram.transfer({ fromPubkey: new PublicKey(plan.poster.wallet), toPubkey: new PublicKey(plan.winner.wallet), lamports })] },
    },
    funds: { lamports },
    spend: { lamports, feeLamports: networkFees(0n), recipient: { wallet: plan.winner.wallet, handle: plan.winner.handle } },
  };
  const outcome = await runHeldAction(services, request, {
    // The bounty may have been awarded (and its hold settled) between the first look and the reservation.
    recheck: async () => void (await planAtHead(services, agentId, bountyId, submissionId)),
    whenHeld(holder) {
      // Asking again for the same submission while its unsigned payment is outstanding gives the same transaction.
      const heldFor = (holder.record.data as { submission_id?: string }).submission_id;
      if (holder.state === 'unsigned' && heldFor === submissionId && !sign) return services.pipeline.handoutOf(holder, plan.poster.wallet);
      throw heldBy(holder, bountyId);
    },
  });
  return actionReply(outcome);
}
