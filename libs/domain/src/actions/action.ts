import { Journal, JournaledMap, type LedgerEntry } from '@svc/ledger/model';

export type ActionName =
  | 'deploy'
  | 'buy'
  | 'sell'
  | 'burn'
  | 'swap'
  | 'transfer'
  | 'fee_claim'
  | 'award_payment'
  | 'fee_share'
  | 'submit'
  | 'fee_distribution'
  | 'buyback'
  | 'faucet'
  | 'anchor';

/** Every action name, for validating what a stored outbox row or a client names. */
export const ACTION_NAMES: readonly ActionName[] = [
  'deploy',
  'buy',
  'sell',
  'burn',
  'swap',
  'transfer',
  'fee_claim',
  'award_payment',
  'fee_share',
  'submit',
  'fee_distribution',
  'buyback',
  'faucet',
  'anchor',
];

/** An on-chain action the service sent (or recorded) for a citizen, with its signature. */
export interface ActionRecordedData {
  action: ActionName;
  signature: string;
  /** The citizen's wallet that signed and paid (a faucet's: the wallet it funded). */
  wallet: string;
  /** Action-specific public facts (amounts, mint, counterparty, bounty). */
  details: Record<string, unknown>;
  /** The day-cap reservation this action spends, when a spending policy held one for it. */
  reservation?: string;
}

export type ActionEvent = { type: 'ActionRecorded'; actor: string; data: ActionRecordedData };

export interface ActionsState {
  /** Signature -> seq of its record: a confirmed transaction is recorded once, however often it is retried. */
  bySignature: JournaledMap<string, number>;
}

export function initialActions(journal: Journal): ActionsState {
  return { bySignature: new JournaledMap(journal, 'actions.bySignature') };
}

export function evolveActions(state: ActionsState, event: ActionEvent & Pick<LedgerEntry, 'seq'>): void {
  switch (event.type) {
    case 'ActionRecorded':
      state.bySignature.set(event.data.signature, event.seq);
      return;
    default: {
      const never: never = event.type;
      return never;
    }
  }
}

export function snapshotActions(state: ActionsState): unknown {
  return { bySignature: state.bySignature.toJSON() };
}

export function restoreActions(journal: Journal, json: unknown): ActionsState {
  return { bySignature: new JournaledMap(journal, 'actions.bySignature', (json as { bySignature: Array<[string, number]> }).bySignature) };
}
