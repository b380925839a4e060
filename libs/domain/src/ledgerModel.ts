import { Journal, type LedgerEntry, type LedgerModel } from '@svc/ledger/model';
import { decideAction, type ActionCommand } from './actions/decide';
import { evolveActions, initialActions, restoreActions, snapshotActions, type ActionEvent, type ActionsState } from './actions/action';
import { evolveBounties, initialBounties, restoreBounties, snapshotBounties, type BountiesState, type BountyEvent } from './bounties/bounty';
import { decideBounty, type BountyCommand } from './bounties/decide';
import { initialCaps, type CapsState } from './caps/dailyCaps';
import { evolveCitizens, initialCitizens, restoreCitizens, snapshotCitizens, type CitizenEvent, type CitizensState } from './citizens/citizen';
import { decideCitizen, type CitizenCommand } from './citizens/decide';
import { decidePost, type PostCommand } from './posts/decide';
import { evolvePosts, initialPosts, restorePosts, snapshotPosts, type PostEvent, type PostsState } from './posts/post';
import { decidePolicy, type PolicyCommand } from './policy/decide';
import { evolvePolicies, initialPolicies, settleReservation, snapshotPolicies, type PoliciesState, type PolicyEvent } from './policy/policy';
import { decideTreasury, type TreasuryCommand } from './treasury/decide';

/** Every event type on the public ledger. */
export type LedgerEvent = CitizenEvent | PostEvent | BountyEvent | ActionEvent | PolicyEvent;
export type LedgerEventType = LedgerEvent['type'];
export type LedgerCommand = CitizenCommand | PostCommand | BountyCommand | ActionCommand | TreasuryCommand | PolicyCommand;

/** The state every decision is taken against: consistent with the ledger head, never a read model. */
export interface LedgerState {
  journal: Journal;
  citizens: CitizensState;
  posts: PostsState;
  bounties: BountiesState;
  actions: ActionsState;
  caps: CapsState;
  policies: PoliciesState;
}

const KNOWN: ReadonlySet<string> = new Set<LedgerEventType>([
  'CitizenRegistered',
  'PostCreated',
  'VoteCast',
  'PostFlagged',
  'BountyPosted',
  'BountySubmitted',
  'BountyAwarded',
  'ActionRecorded',
  'PolicySet',
  'PolicyChangeCancelled',
  'SpendReserved',
  'SpendReleased',
]);

/** A ledger entry of a type this build knows, its `data` typed by its `type`: a switch over `type` narrows it. */
export type KnownEntry = LedgerEntry & LedgerEvent;
export type EntryOf<T extends LedgerEventType> = Extract<KnownEntry, { type: T }>;

/** False for an entry a newer build wrote, of a type this one does not know, which every reader must skip. */
export function isKnownEvent(entry: LedgerEntry): entry is KnownEntry {
  return KNOWN.has(entry.type);
}

/** A guard for `find` and `filter`: whether an entry is of `type`, typed as such. */
export function isEntryOf<T extends LedgerEventType>(type: T): <E extends LedgerEntry>(entry: E) => entry is E & EntryOf<T> {
  return <E extends LedgerEntry>(entry: E): entry is E & EntryOf<T> => entry.type === type;
}

/** What a reply to a command needs from the state beside the command's own events. */
export interface DecisionSeen {
  /** The handle of the citizen who acted, for replies that name the author, poster or submitter. */
  actorHandle: string | null;
}

export const ledgerModel: LedgerModel<LedgerState, LedgerCommand, DecisionSeen> = {
  snapshotVersion: 2,
  initialState() {
    const journal = new Journal();
    return {
      journal,
      citizens: initialCitizens(journal),
      posts: initialPosts(journal),
      bounties: initialBounties(journal),
      actions: initialActions(journal),
      caps: initialCaps(journal),
      policies: initialPolicies(journal),
    };
  },
  evolve(state, entry) {
    // An event type this build does not know (written by a newer one) changes no decision it takes.
    if (!isKnownEvent(entry)) return;
    switch (entry.type) {
      case 'CitizenRegistered':
        return evolveCitizens(state.citizens, entry);
      case 'PostCreated':
      case 'VoteCast':
      case 'PostFlagged':
        return evolvePosts(state.posts, state.caps, entry);
      case 'BountyPosted':
      case 'BountySubmitted':
      case 'BountyAwarded':
        return evolveBounties(state.bounties, state.caps, entry);
      case 'ActionRecorded':
        if (entry.data.reservation !== undefined) settleReservation(state.policies, entry.actor, entry.data.reservation);
        return evolveActions(state.actions, entry);
      case 'PolicySet':
      case 'PolicyChangeCancelled':
      case 'SpendReserved':
      case 'SpendReleased':
        return evolvePolicies(state.policies, entry);
      default: {
        const never: never = entry;
        return never;
      }
    }
  },
  decide(command, state, now) {
    switch (command.type) {
      case 'RegisterCitizen':
        return decideCitizen(command, state.citizens);
      case 'CreatePost':
      case 'CastVote':
      case 'FlagPost':
        return decidePost(command, state.posts, state.caps, now);
      case 'PostBounty':
      case 'SubmitWork':
      case 'AwardBounty':
        return decideBounty(command, state.bounties, state.citizens, state.actions, state.caps, state.policies, now);
      case 'RecordAction':
        return decideAction(command, state.actions, state.citizens, state.policies);
      case 'SetPolicy':
      case 'CancelPolicyChange':
      case 'ReserveSpend':
      case 'ReleaseSpend':
        return decidePolicy(command, state.policies);
      case 'RegisterTreasury':
        return decideTreasury(command, state.citizens);
      default: {
        const never: never = command;
        return never;
      }
    }
  },
  seen(command, state) {
    const actor = 'agentId' in command ? command.agentId : command.data.agent_id;
    return { actorHandle: state.citizens.byId.get(actor)?.handle ?? null };
  },
  journal: (state) => state.journal,
  snapshot: (state) => ({
    citizens: snapshotCitizens(state.citizens),
    posts: snapshotPosts(state.posts),
    bounties: snapshotBounties(state.bounties),
    actions: snapshotActions(state.actions),
    caps: state.caps.toJSON(),
    policies: snapshotPolicies(state.policies),
  }),
  restore(json) {
    const journal = new Journal();
    // A snapshot taken before spending policies existed has none, which is what its ledger held.
    const parts = json as { citizens: unknown; posts: unknown; bounties: unknown; actions: unknown; caps: Array<[string, { day: string; used: number }]>; policies?: unknown };
    return {
      journal,
      citizens: restoreCitizens(journal, parts.citizens),
      posts: restorePosts(journal, parts.posts),
      bounties: restoreBounties(journal, parts.bounties),
      actions: restoreActions(journal, parts.actions),
      caps: initialCaps(journal, parts.caps),
      policies: initialPolicies(journal, parts.policies),
    };
  },
};
