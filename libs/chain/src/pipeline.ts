import { createHash } from 'node:crypto';
import {
  Keypair,
  PublicKey,
  TransactionMessage,
  VersionedTransaction,
  type AddressLookupTableAccount,
  type Connection,
  type TransactionInstruction,
} from '@solana/web3.js';
import { monotonicFactory } from 'ulid';
import { Rejected, type ActionName, type ActionRecordedData, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LEDGER_STREAM, type EventStore, type LedgerEntry, type LedgerWriter } from '@svc/ledger';
import type { ChainOutbox, OutboxError, OutboxRow } from '@svc/vault';
import { ChainError, isRpcUnreachable, toChainError } from './errors';
import { findHandedOut, messageHash, withReference } from './handout';
import { observeTransaction, type ObserveSpec } from './observe';
import {
  confirmSignature,
  encodeUnsigned,
  explorerUrl,
  feeLamports,
  isBlockhashExpired,
  keypairFromSecret,
  presendCheck,
  recentBlockhash,
  sendAndConfirm,
  signTransaction,
  signatureOf,
  signatureStatus,
  type RecentBlockhash,
  type SignedTransaction,
} from './transactions';

const ulid = monotonicFactory();

/**
 * How long the process that reserved an action works on it before a recovery pass may take it over:
 * longer than a blockhash lives (150 blocks, 60-90 s) plus the confirmation, so a live sender is never
 * second-guessed.
 */
export const ACTION_LEASE_MS = 120_000;
/** When a recovery pass could not settle a row (RPC or ledger unreachable), it looks again after this. */
export const RETRY_MS = 30_000;
/** How soon a recovery pass looks on-chain for a handed-out transaction the citizen may have sent by now. */
export const UNSIGNED_CHECK_MS = 5_000;
/**
 * Slots before the one read at hand-out that the search for a handed-out transaction still covers: RPC
 * nodes behind one URL may disagree a little about the current slot, and a missed one could be done twice.
 */
const SLOT_MARGIN = 150;

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

/** One on-chain action as a command plans it at the ledger head. */
export interface ActionIntent {
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
  /** One live action per hold (a bounty has one payment): a second one meets `onHeld`. */
  holdKey?: string;
  record: RecordTemplate;
  /** The public facts of the action, returned to the caller and kept with the row. */
  summary: Record<string, unknown>;
  build(recent: RecentBlockhash): Promise<BuiltTransaction>;
  /**
   * Refuses, before anything is signed, what cannot succeed: funds for the amounts plus `fee` (a promise, so
   * that a check can read balances while the fee is looked up).
   */
  check?(fee: Promise<bigint>, transaction: VersionedTransaction): Promise<void>;
  /** Asked again once the hold is taken: the decision may have changed since the command's first look. */
  recheck?(): Promise<void>;
  /** Another live action holds `holdKey`: answer for it (its handout again) or throw. */
  onHeld?(holder: OutboxRow, pipeline: ActionPipeline): Promise<ActionOutcome>;
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

export interface PipelineDeps {
  /** The chain as it stands now (a process may swap it, e.g. when the bundled chain starts). */
  connection(): Connection;
  outbox: ChainOutbox;
  writer: LedgerWriter<LedgerState, LedgerCommand>;
  store: EventStore;
  walletSecret(agentId: string): Promise<Uint8Array | undefined>;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** The RPC could not be reached; `what` says what that means for the action. */
export function rpcUnavailable(error: unknown, what = 'nothing was sent, try again'): Rejected {
  return new Rejected('unavailable', `the Solana RPC could not be reached (${(error as Error).message}); ${what}`, {}, 5);
}

function unsettled(signature: string, why: string): Rejected {
  return new Rejected(
    'unavailable',
    `the transaction ${signature} was sent but ${why}; it is recorded automatically once it confirms, or marked failed if it never lands`,
    { signature },
    5,
  );
}

function rejectedOf(error: OutboxError): Rejected {
  return new Rejected(error.code, error.message, error.details ?? {});
}

function chainFailure(error: ChainError): OutboxError {
  return { code: error.code, message: error.message, details: error.rejection.details };
}

/** The stored idempotency key: the client's key bound to what the request asks, so another request never reuses its row. */
function storedKey(intent: ActionIntent): string | undefined {
  if (intent.idempotencyKey === undefined) return undefined;
  const fingerprint = createHash('sha256').update(JSON.stringify([intent.action, intent.request ?? intent.record, intent.sign])).digest('hex').slice(0, 32);
  return `${intent.idempotencyKey}:${fingerprint}`;
}

/**
 * Every on-chain action goes through here: plan at the ledger head (the command), reserve a durable
 * outbox row, build, then either hand the transaction out unsigned or sign it with the sealed custody key,
 * store the signed bytes, send, confirm, and append the action to the ledger with its signature. A crash or
 * an unknown outcome anywhere is settled by `recover`, from what the outbox holds.
 */
export class ActionPipeline {
  constructor(private readonly deps: PipelineDeps) {}

  /** The durable rows behind every action (for recovery tooling and tests). */
  get outbox(): ChainOutbox {
    return this.deps.outbox;
  }

  private get connection(): Connection {
    return this.deps.connection();
  }

  async run(intent: ActionIntent): Promise<ActionOutcome> {
    // Looked up while the row is reserved: a blockhash is only a freshness token, so it needs no decision first.
    let recent: Promise<RecentBlockhash> | undefined = settledLater(recentBlockhash(this.connection));
    for (let attempt = 0; attempt < 5; attempt++) {
      const id = `act_${ulid()}`;
      const attemptId = ulid();
      const reserved = await this.deps.outbox.reserve({
        id,
        attemptId,
        agentId: intent.agentId,
        action: intent.action,
        idempotencyKey: storedKey(intent),
        holdKey: intent.holdKey,
        record: intent.record,
        summary: intent.summary,
        leaseMs: ACTION_LEASE_MS,
      });
      if (!reserved.ok) {
        const holder = reserved.holder;
        // Whatever comes next may take long enough for that blockhash to age: a later attempt asks again.
        recent = undefined;
        if (reserved.conflict === 'idempotency') {
          const resumed = await this.resume(holder);
          if (resumed) return resumed;
          continue;
        }
        if (holder.state === 'unsigned' && (await this.settleHandout(holder, true)) === 'released') continue;
        const now = (await this.deps.outbox.get(holder.id)) ?? holder;
        if (intent.onHeld) return intent.onHeld(now, this);
        throw new Rejected('invalid_request', `another ${now.action} holds ${intent.holdKey}`);
      }
      return this.perform(intent, id, attemptId, recent ?? recentBlockhash(this.connection));
    }
    throw new Rejected('unavailable', 'the action could not be reserved; try again', {}, 1);
  }

  private async perform(intent: ActionIntent, id: string, attemptId: string, recentLookup: Promise<RecentBlockhash>): Promise<ActionOutcome> {
    const { outbox } = this.deps;
    let row: OutboxRow;
    let signed: SignedTransaction;
    try {
      await intent.recheck?.();
      const recent = await recentLookup;
      const built = await intent.build(recent);
      if (!intent.sign) return await this.handOut(intent, id, attemptId, built, recent);
      const keypair = settledLater(this.custodyKey(intent.agentId, intent.wallet));
      // A fresh key makes every build a transaction of its own: two identical transfers on one blockhash
      // would otherwise share a signature, and the chain would make only one of them.
      const transaction = this.compile(intent.wallet, built, recent, built.reference ? built.instructions : withReference(built.instructions, Keypair.generate().publicKey));
      await intent.check?.(settledLater(feeLamports(this.connection, transaction)), transaction);
      signed = signTransaction(transaction, [await keypair, ...(built.signers ?? [])], recent);
      const stored = await outbox.markSigned(id, attemptId, {
        signature: signed.signature,
        transaction: Buffer.from(signed.wire).toString('base64'),
        messageHash: messageHash(transaction.message),
        blockhash: signed.blockhash,
        lastValidBlockHeight: signed.lastValidBlockHeight,
        leaseMs: ACTION_LEASE_MS,
      });
      if (!stored) throw new Rejected('unavailable', `the ${intent.action} was taken over before it was sent; try again`, {}, 1);
      row = stored;
    } catch (error) {
      await outbox.release(id, attemptId).catch((err) => this.deps.log.warn({ err, id }, 'outbox row not released; recovery will'));
      throw beforeSend(error);
    }
    return this.sendAndRecord(row, signed, false);
  }

  private compile(wallet: string, built: BuiltTransaction, recent: RecentBlockhash, instructions = built.instructions): VersionedTransaction {
    const message = new TransactionMessage({ payerKey: new PublicKey(wallet), recentBlockhash: recent.blockhash, instructions });
    return new VersionedTransaction(message.compileToV0Message(built.lookupTables));
  }

  private async custodyKey(agentId: string, wallet: string): Promise<Keypair> {
    const secret = await this.deps.walletSecret(agentId);
    if (!secret) throw new Error(`no custody secret for ${agentId}`);
    const keypair = keypairFromSecret(secret);
    if (keypair.publicKey.toBase58() !== wallet) throw new Error(`the custody secret of ${agentId} does not match its wallet`);
    return keypair;
  }

  private async handOut(intent: ActionIntent, id: string, attemptId: string, built: BuiltTransaction, recent: RecentBlockhash): Promise<ActionOutcome> {
    const reference = built.reference ?? Keypair.generate().publicKey;
    // Read before the blockhash is used: the transaction can only land after both.
    const minSlot = Math.max(0, (await this.connection.getSlot('confirmed')) - SLOT_MARGIN);
    const transaction = this.compile(intent.wallet, built, recent, built.reference ? built.instructions : withReference(built.instructions, reference));
    await intent.check?.(settledLater(feeLamports(this.connection, transaction)), transaction);
    if (built.signers?.length) transaction.sign(built.signers);
    const stored = await this.deps.outbox.markUnsigned(id, attemptId, {
      transaction: encodeUnsigned(transaction),
      messageHash: messageHash(transaction.message),
      reference: reference.toBase58(),
      minSlot,
      blockhash: recent.blockhash,
      lastValidBlockHeight: recent.lastValidBlockHeight,
      leaseMs: UNSIGNED_CHECK_MS,
    });
    if (!stored) throw new Rejected('unavailable', `the ${intent.action} was taken over before it was handed out; try again`, {}, 1);
    return this.handoutOf(stored, intent.wallet);
  }

  /** The outcome that hands `row`'s unsigned transaction out (again). */
  handoutOf(row: OutboxRow, feePayer: string): ActionOutcome {
    return {
      executed: false,
      action: row.action,
      transaction: row.transaction!,
      fee_payer: feePayer,
      reference: row.reference!,
      last_valid_block_height: row.lastValidBlockHeight!,
      summary: row.summary,
    };
  }

  private executedOf(row: OutboxRow, ledger: { seq: number; hash: string } | null): ActionOutcome {
    return { executed: true, action: row.action, signature: row.signature!, explorer: explorerUrl(row.signature!, this.connection.rpcEndpoint), ledger, summary: row.summary };
  }

  /**
   * The same request again (its idempotency key), after a crash, a 503 or a timeout: finish what its row
   * started instead of acting twice. Undefined when the row was released and the action may start afresh.
   */
  private async resume(row: OutboxRow): Promise<ActionOutcome | undefined> {
    switch (row.state) {
      case 'done':
        return this.executedOf(row, row.receipt);
      case 'failed':
      case 'rejected':
        throw rejectedOf(row.error ?? { code: 'tx_failed', message: `the ${row.action} failed` });
      case 'reserved':
        if (!row.abandoned) throw new Rejected('unavailable', `this ${row.action} is still being prepared; try again`, {}, 1);
        await this.deps.outbox.release(row.id, row.attemptId);
        return undefined;
      case 'unsigned': {
        const settled = await this.settleHandout(row, true);
        if (settled === 'released') return undefined;
        const now = (await this.deps.outbox.get(row.id))!;
        if (settled === 'pending') return this.handoutOf(now, await this.walletOf(row.agentId));
        return this.executedOf(now, now.receipt);
      }
      case 'sent':
        return this.finishSent(row);
      default: {
        const never: never = row.state;
        return never;
      }
    }
  }

  private async walletOf(agentId: string): Promise<string> {
    return await this.deps.writer.read((state) => state.citizens.byId.get(agentId)?.wallet ?? '');
  }

  private signedOf(row: OutboxRow): SignedTransaction {
    if (!row.signature || !row.transaction || !row.blockhash || row.lastValidBlockHeight === null) {
      throw new Error(`outbox row ${row.id} is sent but lacks its transaction`);
    }
    return { signature: row.signature, wire: Buffer.from(row.transaction, 'base64'), blockhash: row.blockhash, lastValidBlockHeight: row.lastValidBlockHeight };
  }

  /**
   * A sent row a caller waits on again: settle it from the chain's view. Bytes the chain never saw are sent
   * again only while they can land, and only if they would succeed on the chain's state now.
   */
  private async finishSent(row: OutboxRow): Promise<ActionOutcome> {
    const signed = this.signedOf(row);
    let status;
    let expired;
    try {
      // Expiry first: a status read after it is final, since nothing built on that blockhash can land later.
      expired = await isBlockhashExpired(this.connection, signed.lastValidBlockHeight);
      status = await signatureStatus(this.connection, signed.signature);
    } catch (error) {
      if (isRpcUnreachable(error)) throw unsettled(signed.signature, 'the chain cannot be reached to see where it stands');
      throw error;
    }
    if (status.state === 'confirmed') return this.recordFor(row);
    if (status.state === 'not_found') {
      const refusal = expired ? neverLanded() : await this.presend(row, signed);
      if (refusal) {
        await this.deps.outbox.markFailed(row.id, chainFailure(refusal));
        throw Rejected.of(refusal.rejection);
      }
    }
    return this.sendAndRecord(row, signed, status.state === 'not_found');
  }

  /** The pre-send check of bytes signed earlier; an unreachable RPC leaves the row as it is. */
  private async presend(row: OutboxRow, signed: SignedTransaction): Promise<ChainError | undefined> {
    try {
      return await presendCheck(this.connection, signed);
    } catch (error) {
      if (isRpcUnreachable(error)) throw unsettled(signed.signature, 'the chain cannot be reached to check it before sending it again');
      this.deps.log.warn({ err: error, id: row.id }, 'pre-send check could not run; sending as stored');
      return undefined;
    }
  }

  private async sendAndRecord(row: OutboxRow, signed: SignedTransaction, resend: boolean): Promise<ActionOutcome> {
    try {
      await sendAndConfirm(this.connection, signed, { resend });
    } catch (error) {
      // Only the chain's verdict settles the row; anything else (a network fault, a transaction processed but
      // not confirmed when its blockhash expired) may still land, and is left to recovery.
      if (error instanceof ChainError) {
        await this.deps.outbox.markFailed(row.id, chainFailure(error));
        throw Rejected.of(error.rejection);
      }
      this.deps.log.warn({ err: error, id: row.id, signature: signed.signature }, 'transaction outcome unknown; left to recovery');
      await this.deps.outbox.renewLease(row.id, 0).catch(() => undefined);
      throw unsettled(signed.signature, 'its confirmation could not be seen');
    }
    return this.recordFor(row);
  }

  private async recordFor(row: OutboxRow): Promise<ActionOutcome> {
    try {
      const ledger = await this.record(row);
      return this.executedOf(row, ledger);
    } catch (error) {
      if (error instanceof Rejected) throw error;
      this.deps.log.error({ err: error, id: row.id, signature: row.signature }, 'confirmed but not yet recorded; left to recovery');
      await this.deps.outbox.renewLease(row.id, 0).catch(() => undefined);
      throw unsettled(row.signature!, 'it could not be written to the ledger yet');
    }
  }

  /**
   * Appends the record of a confirmed transaction and closes its row. A record that already landed (recovery
   * or a retry got there first) answers the receipt it has.
   */
  private async record(row: OutboxRow): Promise<{ seq: number; hash: string } | null> {
    const signature = row.signature!;
    const command = await this.commandFor(row.record as RecordTemplate, signature);
    const outcome = await this.deps.writer.executeAtHead(command);
    if (!outcome.ok) {
      this.deps.log.error({ id: row.id, signature, rejection: outcome.rejection }, 'confirmed on-chain but the ledger refused the record');
      await this.deps.outbox.markRejected(row.id, { code: outcome.rejection.code, message: outcome.rejection.message, details: { ...outcome.rejection.details, signature } });
      throw Rejected.of({ ...outcome.rejection, details: { ...outcome.rejection.details, signature } });
    }
    const last = outcome.entries.at(-1);
    const receipt = last ? { seq: last.seq, hash: last.hash } : ((await this.deps.outbox.get(row.id))?.receipt ?? (await this.recordedReceipt(signature)));
    await this.deps.outbox.markDone(row.id, receipt);
    return receipt;
  }

  private async commandFor(template: RecordTemplate, signature: string): Promise<LedgerCommand> {
    if (template.type === 'RecordAction' && template.observe) {
      const { observe, ...rest } = template;
      // Read again whoever records it (a retry, recovery): a confirmed transaction always shows the same balances.
      const observed = await observeTransaction(this.connection, signature, observe);
      return { ...rest, data: { ...rest.data, signature, details: { ...rest.data.details, observed } } };
    }
    return { ...template, data: { ...template.data, signature } } as LedgerCommand;
  }

  private async recordedReceipt(signature: string): Promise<{ seq: number; hash: string }> {
    const seq = await this.deps.writer.read((state) => state.actions.bySignature.get(signature));
    if (seq === undefined) throw new Error(`transaction ${signature} is not on the ledger`);
    const [stored] = await this.deps.store.readForward(LEDGER_STREAM, seq, 1);
    const entry = JSON.parse(stored!.data) as LedgerEntry;
    return { seq: entry.seq, hash: entry.hash };
  }

  /**
   * Where a handed-out transaction stands: landed (then recorded like any sent one), expired without
   * landing (its row goes), or still able to land. `forCaller` turns an unreachable RPC into a 503.
   */
  async settleHandout(row: OutboxRow, forCaller = false): Promise<'recorded' | 'released' | 'pending'> {
    try {
      const handedOut = VersionedTransaction.deserialize(Buffer.from(row.transaction!, 'base64')).message;
      // Expiry first: a lookup after it is final, since nothing built on that blockhash can land later.
      const expired = await isBlockhashExpired(this.connection, row.lastValidBlockHeight!);
      const sent = await findHandedOut(this.connection, handedOut, row.reference!, row.minSlot ?? 0);
      if (sent) {
        const wire = Buffer.from(sent.wire).toString('base64');
        const marked = await this.deps.outbox.markUnsignedSent(row.id, { signature: sent.signature, transaction: wire, leaseMs: ACTION_LEASE_MS });
        const now = await this.deps.outbox.get(row.id);
        if (marked || now?.state === 'sent') await this.record(now!);
        return 'recorded';
      }
      if (expired) {
        await this.deps.outbox.release(row.id, null);
        return 'released';
      }
      return 'pending';
    } catch (error) {
      if (forCaller && !(error instanceof Rejected) && isRpcUnreachable(error)) {
        throw rpcUnavailable(error, `the unsigned ${row.action} handed out earlier still holds it until it can be checked; try again`);
      }
      throw error;
    }
  }

  /**
   * Sends a transaction its signer built or signed (`/tx/submit`): one the service handed out is recorded as
   * the action it was handed out for; any other as a plain `submit`. The row is written before the send.
   */
  async submit(agentId: string, wallet: string, transaction: VersionedTransaction): Promise<ActionOutcome> {
    const handedOut = await this.handedOutFor(agentId, transaction);
    const signed: SignedTransaction = {
      signature: signatureOf(transaction),
      wire: transaction.serialize(),
      blockhash: transaction.message.recentBlockhash,
      // The service did not choose this blockhash; its expiry is whatever the chain says it is.
      lastValidBlockHeight: handedOut?.lastValidBlockHeight ?? (await this.lastValidHeightOf(transaction.message.recentBlockhash)),
    };
    const wire = Buffer.from(signed.wire).toString('base64');
    let row: OutboxRow | undefined;
    if (handedOut) {
      await this.deps.outbox.markUnsignedSent(handedOut.id, { signature: signed.signature, transaction: wire, leaseMs: ACTION_LEASE_MS });
      row = await this.deps.outbox.get(handedOut.id);
      // Already sent or settled (this copy before, or one found on-chain): finish or answer that one.
      if (row && (row.state !== 'sent' || row.signature !== signed.signature)) {
        const resumed = await this.resume(row);
        if (resumed) return resumed;
      }
    }
    if (!row) {
      const inserted = await this.deps.outbox.insertSent({
        id: `act_${ulid()}`,
        attemptId: ulid(),
        agentId,
        action: 'submit',
        record: { type: 'RecordAction', agentId, data: { action: 'submit', wallet, details: { programs: programsOf(transaction) } } },
        summary: { programs: programsOf(transaction) },
        leaseMs: ACTION_LEASE_MS,
        signature: signed.signature,
        transaction: wire,
        messageHash: messageHash(transaction.message),
        blockhash: signed.blockhash,
        lastValidBlockHeight: signed.lastValidBlockHeight,
      });
      row = inserted.ok ? await this.deps.outbox.bySignature(signed.signature) : inserted.holder;
      if (!inserted.ok) return (await this.resume(row!))!;
    }
    return this.sendAndRecord(row!, signed, false);
  }

  /** The row of a handout this transaction signs: the exact message, or the same action under its reference. */
  async handedOutFor(agentId: string, transaction: VersionedTransaction): Promise<OutboxRow | undefined> {
    const exact = await this.deps.outbox.byMessage(agentId, messageHash(transaction.message));
    if (exact) return exact;
    return undefined;
  }

  private async lastValidHeightOf(blockhash: string): Promise<number> {
    // A blockhash is valid for 150 blocks after the block that made it; the RPC does not say which one that
    // was, so count from now, which only ever waits longer than needed.
    const valid = await this.connection.isBlockhashValid(blockhash, { commitment: 'confirmed' });
    const height = await this.connection.getBlockHeight('confirmed');
    if (!valid.value) throw new Rejected('send_failed', `the transaction's blockhash ${blockhash} is unknown or expired: build it on a recent one`);
    return height + 150;
  }

  /**
   * Finishes the rows a process left unsettled (it crashed, or the ledger or the RPC failed it): a confirmed
   * transaction is recorded, a failed or expired one is marked failed, an undecided one is resent from the
   * stored bytes and awaited. Safe to run in every process at once.
   */
  async recover(signal?: AbortSignal): Promise<Array<{ id: string; action: string; hold_key: string | null; outcome: RecoveryOutcome }>> {
    const settled: Array<{ id: string; action: string; hold_key: string | null; outcome: RecoveryOutcome }> = [];
    while (!signal?.aborted) {
      const row = await this.deps.outbox.claimDue(ulid(), ACTION_LEASE_MS);
      if (!row) break;
      let outcome: RecoveryOutcome;
      try {
        outcome = await this.settle(row, signal);
      } catch (error) {
        this.deps.log.warn({ err: error, id: row.id, signature: row.signature }, 'outbox recovery will retry');
        await this.deps.outbox.renewLease(row.id, RETRY_MS);
        outcome = 'retry_later';
      }
      settled.push({ id: row.id, action: row.action, hold_key: row.holdKey, outcome });
    }
    return settled;
  }

  private async settle(row: OutboxRow, signal?: AbortSignal): Promise<RecoveryOutcome> {
    if (row.state === 'reserved') {
      // Nothing was signed, so nothing can have been sent.
      await this.deps.outbox.release(row.id, row.attemptId);
      return 'released';
    }
    if (row.state === 'unsigned') {
      let outcome: 'recorded' | 'released' | 'pending';
      try {
        outcome = await this.settleHandout(row);
      } catch (error) {
        if (error instanceof Rejected) return 'rejected';
        throw error;
      }
      if (outcome === 'pending') await this.deps.outbox.renewLease(row.id, UNSIGNED_CHECK_MS);
      return outcome;
    }
    const signed = this.signedOf(row);
    // Expiry first: a status read after it is final, since nothing built on that blockhash can land later.
    const expired = await isBlockhashExpired(this.connection, signed.lastValidBlockHeight);
    const status = await signatureStatus(this.connection, signed.signature);
    if (status.state === 'failed') {
      await this.deps.outbox.markFailed(row.id, { code: 'tx_failed', message: `the transaction landed and failed (${JSON.stringify(status.err)})`, details: { logs: status.logs, signature: signed.signature } });
      return 'failed';
    }
    if (status.state === 'not_found' && expired) {
      this.deps.log.info({ id: row.id, signature: row.signature }, 'transaction never landed; marked failed');
      await this.deps.outbox.markFailed(row.id, chainFailure(neverLanded()));
      return 'failed';
    }
    if (status.state === 'not_found') {
      const refusal = await presendCheck(this.connection, signed);
      if (refusal) {
        this.deps.log.info({ id: row.id, signature: row.signature, reason: refusal.message }, 'unsent transaction would fail now; marked failed, not sent');
        await this.deps.outbox.markFailed(row.id, chainFailure(refusal));
        return 'failed';
      }
    }
    if (status.state !== 'confirmed') {
      try {
        if (status.state === 'not_found') await sendAndConfirm(this.connection, signed, { resend: true, abortSignal: signal });
        else await confirmSignature(this.connection, signed, signal);
      } catch (error) {
        if (!(error instanceof ChainError)) throw error;
        await this.deps.outbox.markFailed(row.id, chainFailure(error));
        return 'failed';
      }
    }
    try {
      await this.record(row);
    } catch (error) {
      if (error instanceof Rejected) return 'rejected';
      throw error;
    }
    return 'recorded';
  }
}

/**
 * A promise started early and awaited later: its rejection is marked handled now, so an await that never
 * comes (an earlier step failed) is not an unhandled rejection; whoever awaits it still gets the error.
 */
function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

function neverLanded(): ChainError {
  return new ChainError('send_failed', 'the transaction expired (its blockhash passed lastValidBlockHeight) before it landed; nothing was paid');
}

/** Errors before anything was sent: what the chain said, an unreachable RPC, or our own fault (500). */
function beforeSend(error: unknown): unknown {
  const known = toChainError(error);
  if (known) return Rejected.of(known.rejection);
  if (!(error instanceof Rejected) && isRpcUnreachable(error)) return rpcUnavailable(error);
  return error;
}

function programsOf(transaction: VersionedTransaction): string[] {
  const keys = transaction.message.staticAccountKeys;
  return [...new Set(transaction.message.compiledInstructions.map((ix) => keys[ix.programIdIndex]?.toBase58() ?? 'lookup'))];
}

/** Runs a recovery pass now and every `everyMs`, one pass at a time. */
export function startOutboxRecovery(pipeline: ActionPipeline, log: PipelineDeps['log'], everyMs = 30_000): { stop(): Promise<void> } {
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  const pass = () => {
    if (running) return;
    running = pipeline
      .recover(controller.signal)
      .then((settled) => {
        if (settled.length > 0) log.info({ settled }, 'outbox recovery pass');
      })
      .catch((error) => {
        if (!controller.signal.aborted) log.error({ err: error }, 'outbox recovery pass failed');
      })
      .finally(() => {
        running = undefined;
      });
  };
  pass();
  const timer = setInterval(pass, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      controller.abort();
      await running;
    },
  };
}
