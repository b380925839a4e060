import type { LedgerEventType } from './ledgerModel';

/** How a ledger event is announced: /ws and doorbells push post, action, bounty and buyback. */
export type EventKind = 'post' | 'action' | 'bounty' | 'buyback' | 'ledger';

/** The kinds pushed to /ws and doorbells; every other entry is `ledger` (still on /changes). */
export const PUSHED_KINDS: readonly EventKind[] = ['post', 'action', 'bounty', 'buyback'];

/** The kind of an entry; `data` tells a treasury buyback (an action) from the other actions. */
export function kindOf(type: string, data?: unknown): EventKind {
  const known = type as LedgerEventType;
  switch (known) {
    case 'PostCreated':
      return 'post';
    case 'ActionRecorded':
      return (data as { action?: unknown } | undefined)?.action === 'buyback' ? 'buyback' : 'action';
    case 'BountyPosted':
    case 'BountySubmitted':
    case 'BountyAwarded':
      return 'bounty';
    case 'CitizenRegistered':
    case 'VoteCast':
    case 'PostFlagged':
    case 'PolicySet':
    case 'PolicyChangeCancelled':
    case 'SpendReserved':
    case 'SpendReleased':
      return 'ledger';
    default: {
      const never: never = known;
      void never;
      return 'ledger';
    }
  }
}
