import type { AddressLookupTableAccount, Keypair, PublicKey, TransactionInstruction } from '@solana/web3.js';
import type { AggregatorQuote, Funds, TradeOptions, TradeQuote, Venue } from '@svc/chain';
import type { ActionName, ActionRecordedData } from '@svc/domain';
import type { ObserveSpec } from './observe';

/** The ledger command that records an action once its transaction confirmed; the pipeline adds the signature. */
export type RecordTemplate =
  | {
      type: 'RecordAction';
      agentId: string;
      data: Omit<ActionRecordedData, 'signature'>;
      /** Read the confirmed transaction and record what it moved under `details.observed`. */
      observe?: ObserveSpec;
    }
  | { type: 'AwardBounty'; agentId: string; data: { bounty_id: string; submission_id: string } };

export interface BuiltTransaction {
  instructions: TransactionInstruction[];
  /** Keys the service signs with beside the citizen's (a new mint), also on a handed-out transaction. */
  signers?: Keypair[];
  lookupTables?: AddressLookupTableAccount[];
  /**
   * A key the transaction names already that no other transaction will (a new mint): it serves as the reference,
   * so none is added, which a transaction close to the size limit cannot afford.
   */
  reference?: PublicKey;
}

/**
 * What to send: instructions built already, or a trade (a venue's, or an aggregator swap) that is built once
 * the action is reserved, so that a retry resuming an earlier attempt builds nothing.
 */
export type Build =
  | { kind: 'instructions'; transaction: BuiltTransaction }
  | { kind: 'trade'; venue: Venue; quote: TradeQuote; options: TradeOptions }
  | { kind: 'swap'; quote: AggregatorQuote; priorityLamports: bigint };

/** One on-chain action as a command plans it at the ledger head: plain data, nothing the pipeline calls back. */
export interface ActionRequest {
  action: ActionName;
  agentId: string;
  /** The citizen's wallet: fee payer and signer. */
  wallet: string;
  /** Sign with the sealed custody key and send; false hands the transaction out unsigned. */
  sign: boolean;
  idempotencyKey?: string;
  /**
   * What the client asked, when the record holds facts that may differ between attempts (a quote, a new mint):
   * a retry under the same Idempotency-Key finds its row by this. Defaults to the record.
   */
  request?: unknown;
  /** One live action per hold (a bounty has one payment): a second one is told who holds it. */
  holdKey?: string;
  record: RecordTemplate;
  /** The public facts of the action, returned to the caller and kept with the row. */
  summary: Record<string, unknown>;
  build: Build;
  /** What the wallet must cover besides the fee, checked before anything is signed or handed out. */
  funds?: Funds;
  /** What the action spends, as the citizen's spending policy judges it: checked, and held against the day cap, before signing. */
  spend?: Spend;
}

/** SOL an action moves out of the wallet by the service's hand, and where to. */
export interface Spend {
  /** SOL moved, in lamports (a swap's input valued in SOL). */
  lamports: bigint;
  /** The network fees it may pay besides, counted against the day cap only. */
  feeLamports: bigint;
  /** The mint a buy or swap buys. */
  mint?: string;
  /** Who is paid: a wallet, and its handle when it is a citizen's. */
  recipient?: { wallet: string; handle: string | null };
}

export type ActionOutcome =
  | {
      executed: true;
      action: string;
      signature: string;
      explorer: string;
      /** The ledger entry that closed the action. */
      ledger: { seq: number; hash: string } | null;
      summary: Record<string, unknown>;
    }
  | {
      executed: false;
      action: string;
      /** base64 VersionedTransaction with the citizen as fee payer, for the citizen to sign and send. */
      transaction: string;
      fee_payer: string;
      reference: string;
      last_valid_block_height: number;
      summary: Record<string, unknown>;
    };

export type RecoveryOutcome = 'recorded' | 'released' | 'failed' | 'rejected' | 'pending' | 'retry_later';
