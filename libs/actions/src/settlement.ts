import { VersionedTransaction } from '@solana/web3.js';
import type { Kysely } from 'kysely';
import {
  ChainError,
  explorerUrl,
  isBlockhashExpired,
  isRpcUnreachable,
  presendCheck,
  sendAndConfirm,
  signatureStatus,
  type SignedTransaction,
  type SolanaChain,
} from '@svc/chain';
import { Rejected, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LEDGER_STREAM, type EventStore, type LedgerEntry, type LedgerWriter } from '@svc/ledger';
import type { ChainOutbox, OutboxError, OutboxRow } from '@svc/vault';
import { findHandedOut } from './handout';
import { observeTransaction } from './observe';
import { chainFailure, neverLanded, rejectedOf, rejectedOfChain, rpcUnavailable, unsettled } from './refusals';
import type { ActionOutcome, RecordTemplate } from './request';

/**
 * How long the process that reserved an action works on it before a recovery pass may take it over, should the
 * process live but hang: longer than a blockhash lives (150 blocks, 60-90 s) plus the confirmation, so a live
 * sender is never second-guessed. A process that dies is seen gone at once (its liveness).
 */
export const ACTION_LEASE_MS = 120_000;
/** When a recovery pass could not settle a row (RPC or ledger unreachable), it looks again after this. */
export const RETRY_MS = 30_000;
/** How soon a recovery pass looks on-chain for a handed-out transaction the citizen may have sent by now. */
export const UNSIGNED_CHECK_MS = 5_000;

/**
 * Test-only: set to an action's name in a process's environment, it kills that process with SIGKILL right after a
 * transaction of that action confirmed and before it is recorded, so a test can show recovery records it once.
 */
export const SIGKILL_AFTER_SEND_ENV = 'TEST_ONLY_SIGKILL_AFTER_SEND';

export interface PipelineDeps {
  /** The chain as it stands now (a process may swap it, e.g. when the bundled chain starts). */
  chain(): SolanaChain;
  outbox: ChainOutbox;
  writer: LedgerWriter<LedgerState, LedgerCommand>;
  store: EventStore;
  walletSecret(agentId: string): Promise<Uint8Array | undefined>;
  /** The time spending policies are decided at: a pending loosening's `effective_at`, the UTC day of a day cap. */
  clock: () => number;
  /** The outbox and the ledger share a database: a record and its row's `done` commit in one transaction. */
  closeWithRecord?: boolean;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** Where the record of a transaction the ledger holds already stands. */
export async function recordedReceipt(deps: Pick<PipelineDeps, 'writer' | 'store'>, signature: string): Promise<{ seq: number; hash: string }> {
  const seq = await deps.writer.read((state) => state.actions.bySignature.get(signature));
  if (seq === undefined) throw new Error(`transaction ${signature} is not on the ledger`);
  const [stored] = await deps.store.readForward(LEDGER_STREAM, seq, 1);
  const entry = JSON.parse(stored!.data) as LedgerEntry;
  return { seq: entry.seq, hash: entry.hash };
}

/**
 * Everything that finishes what an outbox row started, whoever asks (the request that reserved it, a retry
 * under its Idempotency-Key, a recovery pass): send and confirm, record on the ledger once, or settle a
 * handed-out transaction from what the chain shows.
 */
export class Settlement {
  constructor(private readonly deps: PipelineDeps) {}

  private get connection() {
    return this.deps.chain().connection;
  }

  /** Frees what a spending policy reserved for the row's action: nothing left the wallet. */
  async freeSpend(row: Pick<OutboxRow, 'id' | 'agentId'>): Promise<void> {
    // At the head: a process behind it (recovery releasing another's row) would find nothing open and free nothing.
    const freed = await this.deps.writer.executeAtHead({ type: 'ReleaseSpend', agentId: row.agentId, data: { reservation: row.id } }).catch((err: unknown) => ({ ok: false as const, err }));
    // Left open, the reservation still lapses on its own when its `until` passes.
    if (!freed.ok) this.deps.log.warn({ id: row.id, freed }, 'spending reservation not released; it lapses on its own');
  }

  /** The chain's verdict: the action never took effect, so what it reserved is free again. */
  async markFailed(row: Pick<OutboxRow, 'id' | 'agentId'>, error: OutboxError): Promise<void> {
    if (await this.deps.outbox.markFailed(row.id, error)) await this.freeSpend(row);
  }

  executedOf(row: OutboxRow, ledger: { seq: number; hash: string } | null): ActionOutcome {
    return { executed: true, action: row.action, signature: row.signature!, explorer: explorerUrl(row.signature!, this.connection.rpcEndpoint), ledger, summary: row.summary };
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

  /**
   * The same request again (its idempotency key), after a crash, a 503 or a timeout: finish what its row
   * started instead of acting twice. Undefined when the row was released and the action may start afresh.
   */
  async resume(row: OutboxRow): Promise<ActionOutcome | undefined> {
    switch (row.state) {
      case 'done':
        return this.executedOf(row, row.receipt);
      case 'failed':
      case 'rejected':
        throw rejectedOf(row.error ?? { code: 'tx_failed', message: `the ${row.action} failed` });
      case 'reserved':
        if (!row.abandoned) throw new Rejected('unavailable', `this ${row.action} is still being prepared; try again`, {}, 1);
        // Its attempt died before signing: what that attempt reserved of the day cap goes with the row.
        if (await this.deps.outbox.release(row.id, row.attemptId)) await this.freeSpend(row);
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

  signedOf(row: OutboxRow): SignedTransaction {
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
        await this.markFailed(row, chainFailure(refusal));
        throw rejectedOfChain(refusal);
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

  async sendAndRecord(row: OutboxRow, signed: SignedTransaction, resend: boolean): Promise<ActionOutcome> {
    try {
      await sendAndConfirm(this.connection, signed, { resend });
    } catch (error) {
      // Only the chain's verdict settles the row; anything else (a network fault, a transaction processed but
      // not confirmed when its blockhash expired) may still land, and is left to recovery.
      if (error instanceof ChainError) {
        await this.markFailed(row, chainFailure(error));
        throw rejectedOfChain(error);
      }
      this.deps.log.warn({ err: error, id: row.id, signature: signed.signature }, 'transaction outcome unknown; left to recovery');
      await this.deps.outbox.renewLease(row.id, 0).catch(() => undefined);
      throw unsettled(signed.signature, 'its confirmation could not be seen');
    }
    if (process.env[SIGKILL_AFTER_SEND_ENV] === row.action) process.kill(process.pid, 'SIGKILL');
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
  async record(row: OutboxRow): Promise<{ seq: number; hash: string } | null> {
    const signature = row.signature!;
    const command = await this.commandFor(row.record as RecordTemplate, signature, row.id);
    // The hash of the append the row was closed in: an attempt rolled back (a conflict decided again) may have run it too.
    let closedWith: string | undefined;
    const close = async (trx: Kysely<any>, entries: LedgerEntry[]) => {
      const last = entries.at(-1)!;
      closedWith = (await this.deps.outbox.markDoneIn(trx, row.id, { seq: last.seq, hash: last.hash })) ? last.hash : undefined;
    };
    const outcome = await this.deps.writer.executeAtHead(command, this.deps.closeWithRecord ? close : undefined);
    if (!outcome.ok) {
      this.deps.log.error({ id: row.id, signature, rejection: outcome.rejection }, 'confirmed on-chain but the ledger refused the record');
      await this.deps.outbox.markRejected(row.id, { code: outcome.rejection.code, message: outcome.rejection.message, details: { ...outcome.rejection.details, signature } });
      throw Rejected.of({ ...outcome.rejection, details: { ...outcome.rejection.details, signature } });
    }
    const last = outcome.entries.at(-1);
    const receipt = last ? { seq: last.seq, hash: last.hash } : ((await this.deps.outbox.get(row.id))?.receipt ?? (await recordedReceipt(this.deps, signature)));
    // Closed with the append when it could be; otherwise (a record another attempt landed, a store apart) now.
    if (!last || closedWith !== last.hash) await this.deps.outbox.markDone(row.id, receipt);
    return receipt;
  }

  /** The record of the row's transaction; it settles what a spending policy reserved under the row's id. */
  private async commandFor(template: RecordTemplate, signature: string, reservation: string): Promise<LedgerCommand> {
    if (template.type === 'RecordAction' && template.observe) {
      const { observe, ...rest } = template;
      // Read again whoever records it (a retry, recovery): a confirmed transaction always shows the same balances.
      const observed = await observeTransaction(this.connection, signature, observe);
      return { ...rest, reservation, data: { ...rest.data, signature, details: { ...rest.data.details, observed } } };
    }
    switch (template.type) {
      case 'RecordAction': {
        const { observe: _none, ...rest } = template;
        return { ...rest, reservation, data: { ...rest.data, signature } };
      }
      case 'AwardBounty':
        return { ...template, reservation, data: { ...template.data, signature } };
      default: {
        const never: never = template;
        return never;
      }
    }
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
}
