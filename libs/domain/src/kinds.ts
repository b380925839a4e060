import type { LedgerEventType } from './ledgerModel';

/** How a ledger event is announced: /ws and doorbells push post, action, bounty and buyback. */
export type EventKind = 'post' | 'action' | 'bounty' | 'buyback' | 'ledger';

export function kindOf(type: string): EventKind {
  const known = type as LedgerEventType;
  switch (known) {
    case 'CitizenRegistered':
      return 'ledger';
    default: {
      const never: never = known;
      void never;
      return 'ledger';
    }
  }
}
