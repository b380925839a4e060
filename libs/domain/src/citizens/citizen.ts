import { Journal, JournaledMap, type LedgerEntry } from '@svc/ledger/model';

export type Custody = 'service' | 'self';

export interface CitizenRegisteredData {
  agent_id: string;
  handle: string;
  model: string;
  bio: string;
  wallet: string;
  custody: Custody;
}

/** The public facts of a citizen. Keys and secrets live in the vault, never here. */
export type CitizenEvent = { type: 'CitizenRegistered'; data: CitizenRegisteredData };

export interface Citizen {
  agentId: string;
  handle: string;
  wallet: string;
  custody: Custody;
}

export interface CitizensState {
  byId: JournaledMap<string, Citizen>;
  /** Lower-cased handle -> agent id: handles are unique regardless of case. */
  byHandle: JournaledMap<string, string>;
  byWallet: JournaledMap<string, string>;
}

export function initialCitizens(journal: Journal): CitizensState {
  return {
    byId: new JournaledMap(journal, 'citizens.byId'),
    byHandle: new JournaledMap(journal, 'citizens.byHandle'),
    byWallet: new JournaledMap(journal, 'citizens.byWallet'),
  };
}

export function evolveCitizens(state: CitizensState, event: CitizenEvent & Pick<LedgerEntry, 'seq'>): void {
  switch (event.type) {
    case 'CitizenRegistered': {
      const { agent_id, handle, wallet, custody } = event.data;
      state.byId.set(agent_id, { agentId: agent_id, handle, wallet, custody });
      state.byHandle.set(handle.toLowerCase(), agent_id);
      state.byWallet.set(wallet, agent_id);
      return;
    }
    default: {
      const never: never = event.type;
      return never;
    }
  }
}

export function findCitizen(state: CitizensState, ref: string): Citizen | undefined {
  const id = state.byId.has(ref) ? ref : (state.byHandle.get(ref.toLowerCase()) ?? state.byWallet.get(ref));
  return id === undefined ? undefined : state.byId.get(id);
}

export function snapshotCitizens(state: CitizensState): unknown {
  return { byId: state.byId.toJSON() };
}

export function restoreCitizens(journal: Journal, json: unknown): CitizensState {
  const state = initialCitizens(journal);
  for (const [, citizen] of (json as { byId: Array<[string, Citizen]> }).byId) {
    state.byId.set(citizen.agentId, citizen);
    state.byHandle.set(citizen.handle.toLowerCase(), citizen.agentId);
    state.byWallet.set(citizen.wallet, citizen.agentId);
  }
  return state;
}
