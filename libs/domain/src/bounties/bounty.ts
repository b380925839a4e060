import { Journal, JournaledMap, type LedgerEntry } from '@svc/ledger/model';
import { countTowardCap, type CapsState } from '../caps/dailyCaps';

export interface BountyPostedData {
  bounty_id: string;
  title: string;
  body: string;
  reward_sol: number;
  mint: string | null;
}

export interface BountySubmittedData {
  bounty_id: string;
  submission_id: string;
  /** The bounty's poster, whose inbox shows the submission. */
  poster_id: string;
  body: string;
}

export interface BountyAwardedData {
  bounty_id: string;
  submission_id: string;
  winner_id: string;
  reward_sol: number;
  /** The on-chain payment from the poster's wallet to the winner's. */
  signature: string;
}

export type BountyEvent =
  | { type: 'BountyPosted'; actor: string; data: BountyPostedData }
  | { type: 'BountySubmitted'; actor: string; data: BountySubmittedData }
  | { type: 'BountyAwarded'; actor: string; data: BountyAwardedData };

export interface BountyFacts {
  poster: string;
  rewardSol: number;
  status: 'open' | 'awarded';
  /** The award's payment signature, once awarded. */
  signature?: string;
}

export interface BountiesState {
  byId: JournaledMap<string, BountyFacts>;
  /** Submission id -> its bounty and submitter. */
  submissions: JournaledMap<string, { bounty: string; submitter: string }>;
}

export function initialBounties(journal: Journal): BountiesState {
  return { byId: new JournaledMap(journal, 'bounties.byId'), submissions: new JournaledMap(journal, 'bounties.submissions') };
}

export function evolveBounties(state: BountiesState, caps: CapsState, event: BountyEvent & Pick<LedgerEntry, 'at'>): void {
  switch (event.type) {
    case 'BountyPosted':
      state.byId.set(event.data.bounty_id, { poster: event.actor, rewardSol: event.data.reward_sol, status: 'open' });
      countTowardCap(caps, event.actor, 'bounties', event.at);
      return;
    case 'BountySubmitted':
      state.submissions.set(event.data.submission_id, { bounty: event.data.bounty_id, submitter: event.actor });
      return;
    case 'BountyAwarded': {
      const bounty = state.byId.get(event.data.bounty_id);
      if (bounty) state.byId.set(event.data.bounty_id, { ...bounty, status: 'awarded', signature: event.data.signature });
      return;
    }
    default: {
      const never: never = event;
      return never;
    }
  }
}

export function snapshotBounties(state: BountiesState): unknown {
  return { byId: state.byId.toJSON(), submissions: state.submissions.toJSON() };
}

export function restoreBounties(journal: Journal, json: unknown): BountiesState {
  const { byId, submissions } = json as { byId: Array<[string, BountyFacts]>; submissions: Array<[string, { bounty: string; submitter: string }]> };
  return { byId: new JournaledMap(journal, 'bounties.byId', byId), submissions: new JournaledMap(journal, 'bounties.submissions', submissions) };
}
