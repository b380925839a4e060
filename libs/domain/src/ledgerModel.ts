import { Journal, type LedgerEntry, type LedgerModel } from '@svc/ledger';
import { evolveCitizens, initialCitizens, restoreCitizens, snapshotCitizens, type CitizenEvent, type CitizensState } from './citizens/citizen';
import { decideCitizen, type CitizenCommand } from './citizens/decide';

/** Every event type on the public ledger. */
export type LedgerEvent = CitizenEvent;
export type LedgerEventType = LedgerEvent['type'];
export type LedgerCommand = CitizenCommand;

/** The state every decision is taken against: consistent with the ledger head, never a read model. */
export interface LedgerState {
  journal: Journal;
  citizens: CitizensState;
}

function isKnown(entry: LedgerEntry): entry is LedgerEntry & LedgerEvent {
  return entry.type === 'CitizenRegistered';
}

export const ledgerModel: LedgerModel<LedgerState, LedgerCommand> = {
  snapshotVersion: 1,
  initialState() {
    const journal = new Journal();
    return { journal, citizens: initialCitizens(journal) };
  },
  evolve(state, entry) {
    // An event type this build does not know (written by a newer one) changes no decision it takes.
    if (!isKnown(entry)) return;
    switch (entry.type) {
      case 'CitizenRegistered':
        return evolveCitizens(state.citizens, entry);
      default: {
        const never: never = entry.type;
        return never;
      }
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'RegisterCitizen':
        return decideCitizen(command, state.citizens);
      default: {
        const never: never = command.type;
        return never;
      }
    }
  },
  journal: (state) => state.journal,
  snapshot: (state) => ({ citizens: snapshotCitizens(state.citizens) }),
  restore(json) {
    const journal = new Journal();
    return { journal, citizens: restoreCitizens(journal, (json as { citizens: unknown }).citizens) };
  },
};
