import type { Decision, Rejection } from '@svc/ledger/model';
import type { ActionsState } from '../actions/action';
import { overCap, type CapsState } from '../caps/dailyCaps';
import type { Citizen, CitizensState } from '../citizens/citizen';
import type { PoliciesState } from '../policy/policy';
import type { BountiesState } from './bounty';

export type BountyCommand =
  | { type: 'PostBounty'; agentId: string; data: { bounty_id: string; title: string; body: string; reward_sol: number; mint: string | null } }
  | { type: 'SubmitWork'; agentId: string; data: { bounty_id: string; submission_id: string; body: string } }
  /** Sent after the payment confirmed on-chain: records the payment (settling what a spending policy reserved for it) and closes the bounty. */
  | { type: 'AwardBounty'; agentId: string; data: { bounty_id: string; submission_id: string; signature: string }; reservation?: string };

const reject = (rejection: Rejection): Decision => ({ ok: false, rejection });

/**
 * A reward is paid as one transfer of whole lamports, so it must be a whole number of them: the ledger and
 * every reply then say exactly what is paid. Binary floating point may leave 0.1 + 0.2 a hair off, which is
 * read as the lamport it plainly means; anything further off is refused.
 */
export function wholeLamports(sol: number): number | undefined {
  const lamports = Math.round(sol * 1e9);
  return Math.abs(sol * 1e9 - lamports) <= 1e-3 ? lamports : undefined;
}

export interface AwardPlan {
  poster: Citizen;
  winner: Citizen;
  rewardSol: number;
}

/**
 * Who may award what, at the ledger head. The award route asks this before it pays, and the decider
 * asks again when the paid award is recorded.
 */
export function planAward(
  bounties: BountiesState,
  citizens: CitizensState,
  agentId: string,
  bountyId: string,
  submissionId: string,
): { ok: true; plan: AwardPlan } | { ok: false; rejection: Rejection } {
  const bounty = bounties.byId.get(bountyId);
  if (!bounty) return { ok: false, rejection: { code: 'not_found', message: `bounty ${bountyId} not found` } };
  if (bounty.poster !== agentId) return { ok: false, rejection: { code: 'not_poster', message: 'only the citizen who posted a bounty may award it' } };
  if (bounty.status !== 'open') return { ok: false, rejection: { code: 'bounty_closed', message: `bounty ${bountyId} is already awarded` } };
  const submission = bounties.submissions.get(submissionId);
  if (!submission || submission.bounty !== bountyId) {
    return { ok: false, rejection: { code: 'not_found', message: `submission ${submissionId} not found on bounty ${bountyId}` } };
  }
  const poster = citizens.byId.get(agentId);
  const winner = citizens.byId.get(submission.submitter);
  if (!poster || !winner) return { ok: false, rejection: { code: 'not_found', message: 'the poster or the submitter is not a citizen' } };
  return { ok: true, plan: { poster, winner, rewardSol: bounty.rewardSol } };
}

export function decideBounty(
  command: BountyCommand,
  state: BountiesState,
  citizens: CitizensState,
  actions: ActionsState,
  caps: CapsState,
  policies: PoliciesState,
  at: number,
): Decision {
  switch (command.type) {
    case 'PostBounty': {
      const { data, agentId } = command;
      if (state.byId.has(data.bounty_id)) return reject({ code: 'invalid_request', message: `bounty id ${data.bounty_id} exists` });
      const lamports = wholeLamports(data.reward_sol);
      if (lamports === undefined) {
        return reject({ code: 'invalid_request', message: 'reward_sol has more than 9 decimals: it is paid in whole lamports (0.000000001 SOL)', details: { field: 'reward_sol' } });
      }
      const capped = overCap(caps, agentId, 'bounties', at);
      if (capped) return reject(capped);
      return { ok: true, events: [{ type: 'BountyPosted', actor: agentId, data: { ...data, reward_sol: lamports / 1e9 } }] };
    }
    case 'SubmitWork': {
      const { data, agentId } = command;
      const bounty = state.byId.get(data.bounty_id);
      if (!bounty) return reject({ code: 'not_found', message: `bounty ${data.bounty_id} not found` });
      if (bounty.poster === agentId) return reject({ code: 'own_bounty', message: 'citizens cannot submit to their own bounty' });
      if (bounty.status !== 'open') return reject({ code: 'bounty_closed', message: `bounty ${data.bounty_id} is already awarded` });
      if (state.submissions.has(data.submission_id)) return reject({ code: 'invalid_request', message: `submission id ${data.submission_id} exists` });
      return { ok: true, events: [{ type: 'BountySubmitted', actor: agentId, data: { ...data, poster_id: bounty.poster } }] };
    }
    case 'AwardBounty': {
      const { data, agentId } = command;
      // A recovered award whose record already landed is done, not refused.
      if (state.byId.get(data.bounty_id)?.signature === data.signature) return { ok: true, events: [] };
      if (actions.bySignature.has(data.signature)) return reject({ code: 'invalid_request', message: `signature ${data.signature} is already recorded` });
      const planned = planAward(state, citizens, agentId, data.bounty_id, data.submission_id);
      if (!planned.ok) return reject(planned.rejection);
      const { poster, winner, rewardSol } = planned.plan;
      const reservation = command.reservation !== undefined && policies.spending.get(agentId)?.open[command.reservation] ? { reservation: command.reservation } : {};
      return {
        ok: true,
        events: [
          {
            type: 'ActionRecorded',
            actor: agentId,
            data: {
              action: 'award_payment',
              signature: data.signature,
              wallet: poster.wallet,
              details: { to: winner.wallet, to_agent_id: winner.agentId, amount_sol: rewardSol, bounty_id: data.bounty_id },
              ...reservation,
            },
          },
          {
            type: 'BountyAwarded',
            actor: agentId,
            data: { bounty_id: data.bounty_id, submission_id: data.submission_id, winner_id: winner.agentId, reward_sol: rewardSol, signature: data.signature },
          },
        ],
      };
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}
