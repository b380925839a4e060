import { createHash } from 'node:crypto';
import { Keypair, PublicKey, TransactionMessage, VersionedTransaction, type Connection } from '@solana/web3.js';
import {
  BlockhashKeeper,
  assertFunds,
  checkAggregatorTransaction,
  encodeUnsigned,
  keypairFromSecret,
  messageFee,
  newReference,
  signTransaction,
  signWith,
  toChainError,
  withReference,
  type RecentBlockhash,
  type SignedTransaction,
  type SwapExpectation,
} from '@svc/chain';
import { Rejected } from '@svc/domain';
import { OwedWrites, newUlid } from '@svc/readmodel';
import type { ChainOutbox, OutboxRow, SignedSend } from '@svc/vault';
import { messageHash } from './handout';
import { OutboxRecovery, type Recovered } from './recovery';
import { beforeSend, rejectedOfChain, settledLater } from './refusals';
import type { ActionOutcome, ActionRequest, BuiltTransaction } from './request';
import { ACTION_LEASE_MS, Settlement, UNSIGNED_CHECK_MS, type PipelineDeps } from './settlement';
import { Submissions } from './submit';

/**
 * Slots before the one read at hand-out that the search for a handed-out transaction still covers: RPC
 * nodes behind one URL may disagree a little about the current slot, and a missed one could be done twice.
 */
const SLOT_MARGIN = 150;

/** How long a day-cap reservation holds if nothing settles it: past the lease, recovery has found the action's end. */
const SPEND_HOLD_MS = 2 * ACTION_LEASE_MS;

/** How often a release the database did not take is tried again. */
const OWED_RETRY_MS = 250;

/** Where a request stands once it asked for its outbox row. */
export type Reservation =
  /** The row is this request's: `perform` it, or `release` it. */
  | { kind: 'reserved'; request: ActionRequest; id: string; attemptId: string; recent: Promise<RecentBlockhash> }
  /** An earlier attempt under the same Idempotency-Key finished (or was finished now): its outcome. */
  | { kind: 'finished'; outcome: ActionOutcome }
  /** Another live action holds `request.holdKey`. */
  | { kind: 'held'; holder: OutboxRow };

/** The stored idempotency key: the client's key bound to what the request asks, so another request never reuses its row. */
function storedKey(request: ActionRequest): string | undefined {
  if (request.idempotencyKey === undefined) return undefined;
  const fingerprint = createHash('sha256').update(JSON.stringify([request.action, request.request ?? request.record, request.sign])).digest('hex').slice(0, 32);
  return `${request.idempotencyKey}:${fingerprint}`;
}

/**
 * Every on-chain action goes through here: the command plans it at the ledger head and hands over a plain
 * request; the pipeline reserves a durable outbox row, builds, checks the funds, then either hands the
 * transaction out unsigned or signs it with the sealed custody key, stores the signed bytes, sends, confirms,
 * and appends the action to the ledger with its signature. A crash or an unknown outcome anywhere is settled
 * by `recover`, from what the outbox holds.
 */
export class ActionPipeline {
  private readonly settlement: Settlement;
  private readonly recovery: OutboxRecovery;
  private readonly submissions: Submissions;
  private readonly owed = new OwedWrites(OWED_RETRY_MS);
  private readonly blockhashes = new BlockhashKeeper(() => this.connection);

  constructor(private readonly deps: PipelineDeps) {
    this.settlement = new Settlement(deps);
    this.recovery = new OutboxRecovery(deps, this.settlement);
    this.submissions = new Submissions(deps, this.settlement);
  }

  /** The durable rows behind every action (for recovery tooling and tests). */
  get outbox(): ChainOutbox {
    return this.deps.outbox;
  }

  private get connection(): Connection {
    return this.deps.chain().connection;
  }

  /** Reserves and performs; a hold another action has is refused. A request that must look again once its row is reserved uses `reserve`. */
  async run(request: ActionRequest): Promise<ActionOutcome> {
    if (request.sign && request.holdKey === undefined) return this.signAndSend(request);
    const reservation = await this.reserve(request);
    switch (reservation.kind) {
      case 'finished':
        return reservation.outcome;
      case 'held':
        throw new Rejected('invalid_request', `another ${reservation.holder.action} holds ${request.holdKey}`);
      case 'reserved':
        return this.perform(reservation);
      default: {
        const never: never = reservation;
        return never;
      }
    }
  }

  /** Takes the request's outbox row, unless an earlier attempt under its key has one (then finishes that) or a live action holds its hold. */
  async reserve(request: ActionRequest): Promise<Reservation> {
    // Looked up while the row is reserved: a blockhash is only a freshness token, so it needs no decision first.
    let recent: Promise<RecentBlockhash> | undefined = settledLater(this.blockhashes.recent());
    for (let attempt = 0; attempt < 5; attempt++) {
      const id = `act_${newUlid()}`;
      const attemptId = newUlid();
      const reserved = await this.deps.outbox
        .reserve({
          id,
          attemptId,
          agentId: request.agentId,
          action: request.action,
          idempotencyKey: storedKey(request),
          holdKey: request.holdKey,
          record: request.record,
          summary: request.summary,
          leaseMs: ACTION_LEASE_MS,
        })
        .catch(async (error: unknown) => {
          // The insert may have committed with its reply lost: that row would name this live process for the whole
          // lease, and every retry under the key would wait it out. Nothing was signed under this attempt, so it goes.
          await this.owed.sayOrOwe(id, () => this.deps.outbox.release(id, attemptId)).catch(() => undefined);
          throw error;
        });
      if (reserved.ok) return { kind: 'reserved', request, id, attemptId, recent: recent ?? settledLater(this.blockhashes.recent()) };
      const holder = reserved.holder;
      // Whatever comes next may take long enough for that blockhash to age: a later attempt asks again.
      recent = undefined;
      if (reserved.conflict === 'idempotency') {
        const resumed = await this.settlement.resume(holder);
        if (resumed) return { kind: 'finished', outcome: resumed };
        continue;
      }
      if (holder.state === 'unsigned' && (await this.settlement.settleHandout(holder, true)) === 'released') continue;
      return { kind: 'held', holder: (await this.deps.outbox.get(holder.id)) ?? holder };
    }
    throw new Rejected('unavailable', 'the action could not be reserved; try again', {}, 1);
  }

  /**
   * Gives a reserved row up before anything was signed: its hold, its Idempotency-Key and what its policy reserved
   * are free again. When the database is down the release is owed and said again until it is taken: the row names
   * this live process and a two-minute lease, so no retry or recovery pass would take it over before then.
   */
  async release(reservation: Extract<Reservation, { kind: 'reserved' }>): Promise<void> {
    const row = { id: reservation.id, agentId: reservation.request.agentId };
    const give = async () => {
      const released = await this.deps.outbox.release(reservation.id, reservation.attemptId);
      // Gone all the same: an earlier try of this release committed with its reply lost (freeing twice is a no-op).
      // Still there: the row moved on (it was signed, and may still land), so what it spends stays reserved.
      if (released || !(await this.deps.outbox.get(reservation.id))) await this.settlement.freeSpend(row);
    };
    await this.owed.sayOrOwe(reservation.id, give).catch((err) => this.deps.log.warn({ err, id: reservation.id }, 'outbox row not released; recovery will'));
  }

  /** Stops retrying owed releases, as a process that dies would (its rows are recovered by the next one). */
  close(): void {
    this.owed.close();
  }

  async perform(reservation: Extract<Reservation, { kind: 'reserved' }>): Promise<ActionOutcome> {
    const { request, id, attemptId } = reservation;
    let row: OutboxRow;
    let signed: SignedTransaction;
    let fee: bigint;
    try {
      await this.holdSpend(reservation);
      const recent = await reservation.recent;
      const built = await this.build(request);
      if (!request.sign) return await this.handOut(request, id, attemptId, built, recent);
      const sealed = await this.sign(request, built, recent);
      signed = sealed.signed;
      fee = sealed.fee;
      const stored = await this.deps.outbox.markSigned(id, attemptId, sealed.send);
      if (!stored) throw new Rejected('unavailable', `the ${request.action} was taken over before it was sent; try again`, {}, 1);
      row = stored;
    } catch (error) {
      await this.release(reservation);
      throw beforeSend(error);
    }
    return this.explained(request, fee, this.settlement.sendAndRecord(row, signed, false));
  }

  /**
   * The chain's `insufficient` for funds not read before signing (`chainRefuses`), told exactly as the check before
   * signing would have: how much is needed and how much the wallet holds, read now. Not the refused transaction's
   * signature or logs: it never landed, and a client must not go looking for it.
   */
  private async explained(request: ActionRequest, fee: bigint, sending: Promise<ActionOutcome>): Promise<ActionOutcome> {
    try {
      return await sending;
    } catch (error) {
      if (!(error instanceof Rejected) || error.code !== 'insufficient' || !request.funds?.chainRefuses) throw error;
      const short = await assertFunds(this.connection, new PublicKey(request.wallet), request.funds, fee).then(
        () => undefined,
        (checked: unknown) => toChainError(checked),
      );
      if (!short) throw error;
      throw rejectedOfChain(short);
    }
  }

  /**
   * A signed action in one durable write before the chain sees it: built and signed first, then its row stored with
   * the signed bytes in one insert, then sent. A crash after the insert is resent or recorded by recovery; before it,
   * nothing was sent and what the policy held lapses. An earlier attempt under the same Idempotency-Key is finished
   * instead, also one that won the race to the insert: the bytes signed here are then never sent.
   */
  private async signAndSend(request: ActionRequest): Promise<ActionOutcome> {
    const key = storedKey(request);
    for (let attempt = 0; attempt < 5; attempt++) {
      const earlier = key === undefined ? undefined : await this.deps.outbox.byIdempotencyKey(request.agentId, key);
      if (earlier) {
        const resumed = await this.settlement.resume(earlier);
        if (resumed) return resumed;
      }
      const id = `act_${newUlid()}`;
      const recent = settledLater(this.blockhashes.recent());
      // Read and unsealed while the policy is decided and the transaction built, not after.
      const keypair = settledLater(this.custodyKey(request.agentId, request.wallet));
      let held = false;
      let sealed: Awaited<ReturnType<ActionPipeline['sign']>>;
      try {
        held = await this.holdSpend({ request, id });
        const built = await this.build(request);
        sealed = await this.sign(request, built, await recent, keypair);
      } catch (error) {
        if (held) await this.settlement.freeSpend({ id, agentId: request.agentId });
        throw beforeSend(error);
      }
      // Its reply lost with the row committed, the insert throws: nothing was sent, and a retry under the key finds the row.
      const stored = await this.deps.outbox.insertSigned({
        id,
        attemptId: newUlid(),
        agentId: request.agentId,
        action: request.action,
        idempotencyKey: key,
        record: request.record,
        summary: request.summary,
        ...sealed.send,
      });
      if (stored.ok) return this.explained(request, sealed.fee, this.settlement.sendAndRecord(stored.row, sealed.signed, false));
      if (held) await this.settlement.freeSpend({ id, agentId: request.agentId });
    }
    throw new Rejected('unavailable', 'the action could not be stored; try again', {}, 1);
  }

  /**
   * The citizen's spending policy, decided at the ledger head: a refusal throws, and what a signed action spends is
   * reserved against the day cap under the row's id until it is recorded or freed. Concurrent actions are decided
   * one after another by the writer, so together they never pass the cap.
   */
  private async holdSpend({ request, id }: Pick<Extract<Reservation, { kind: 'reserved' }>, 'request' | 'id'>): Promise<boolean> {
    const { spend } = request;
    if (!spend) return false;
    const now = this.deps.clock();
    const outcome = await this.deps.writer.executeAtHead({
      type: 'ReserveSpend',
      agentId: request.agentId,
      data: {
        reservation: id,
        action: request.action,
        lamports: Number(spend.lamports),
        fee_lamports: Number(spend.feeLamports),
        mint: spend.mint ?? null,
        recipient: spend.recipient ?? null,
        reserve: request.sign,
        now,
        until: now + SPEND_HOLD_MS,
      },
    });
    if (!outcome.ok) throw Rejected.of(outcome.rejection);
    return true;
  }

  private async build(request: ActionRequest): Promise<BuiltTransaction> {
    const { build } = request;
    const wallet = new PublicKey(request.wallet);
    switch (build.kind) {
      case 'instructions':
        return build.transaction;
      case 'trade':
        return build.venue.build(build.quote, wallet, build.options);
      case 'swap':
        return this.deps.chain().aggregator.swapInstructions(this.connection, build.quote, wallet, build.priorityLamports);
      default: {
        const never: never = build;
        return never;
      }
    }
  }

  /** Compiles, checks and signs with the custody key: the signed transaction, and its row's columns. */
  private async sign(
    request: ActionRequest,
    built: BuiltTransaction,
    recent: RecentBlockhash,
    keypair = settledLater(this.custodyKey(request.agentId, request.wallet)),
  ): Promise<{ signed: SignedTransaction; send: SignedSend; fee: bigint }> {
    // A fresh key makes every build a transaction of its own: two identical transfers on one blockhash
    // would otherwise share a signature, and the chain would make only one of them.
    const transaction = this.compile(request.wallet, built, recent, built.reference ? built.instructions : withReference(built.instructions, newReference()));
    await this.checkBeforeSigning(request, built, transaction);
    const signed = signTransaction(transaction, [await keypair, ...(built.signers ?? [])], recent);
    const send = {
      signature: signed.signature,
      transaction: Buffer.from(signed.wire).toString('base64'),
      messageHash: messageHash(transaction.message),
      blockhash: signed.blockhash,
      lastValidBlockHeight: signed.lastValidBlockHeight,
      leaseMs: ACTION_LEASE_MS,
    };
    return { signed, send, fee: messageFee(transaction.message) };
  }

  /** The funds first (a short wallet is `insufficient`, whoever built it), then what an aggregator built. */
  private async checkBeforeSigning(request: ActionRequest, built: BuiltTransaction, transaction: VersionedTransaction): Promise<void> {
    if (request.funds && !request.funds.chainRefuses) await assertFunds(this.connection, new PublicKey(request.wallet), request.funds, messageFee(transaction.message));
    const expected = swapExpectation(request);
    if (expected) await checkAggregatorTransaction(this.connection, transaction, built.instructions, built.lookupTables ?? [], expected);
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

  private async handOut(request: ActionRequest, id: string, attemptId: string, built: BuiltTransaction, recent: RecentBlockhash): Promise<ActionOutcome> {
    const reference = built.reference ?? newReference();
    // Read before the blockhash is used: the transaction can only land after both.
    const minSlot = Math.max(0, (await this.connection.getSlot('confirmed')) - SLOT_MARGIN);
    const transaction = this.compile(request.wallet, built, recent, built.reference ? built.instructions : withReference(built.instructions, reference));
    await this.checkBeforeSigning(request, built, transaction);
    if (built.signers?.length) signWith(transaction, built.signers);
    const stored = await this.deps.outbox.markUnsigned(id, attemptId, {
      transaction: encodeUnsigned(transaction),
      messageHash: messageHash(transaction.message),
      reference: reference.toBase58(),
      minSlot,
      blockhash: recent.blockhash,
      lastValidBlockHeight: recent.lastValidBlockHeight,
      leaseMs: UNSIGNED_CHECK_MS,
    });
    if (!stored) throw new Rejected('unavailable', `the ${request.action} was taken over before it was handed out; try again`, {}, 1);
    return this.settlement.handoutOf(stored, request.wallet);
  }

  /** The outcome that hands `row`'s unsigned transaction out (again). */
  handoutOf(row: OutboxRow, feePayer: string): ActionOutcome {
    return this.settlement.handoutOf(row, feePayer);
  }

  /** The outcome of a row that landed and was recorded. */
  executedOf(row: OutboxRow): ActionOutcome {
    return this.settlement.executedOf(row, row.receipt);
  }

  /** Sends a transaction its signer built or signed (`/tx/submit`). */
  submit(agentId: string, wallet: string, transaction: VersionedTransaction): Promise<ActionOutcome> {
    return this.submissions.submit(agentId, wallet, transaction);
  }

  /** The row of the handout this transaction signs. */
  handedOutFor(agentId: string, transaction: VersionedTransaction): Promise<OutboxRow | undefined> {
    return this.submissions.handedOutFor(agentId, transaction);
  }

  /** Finishes the rows nobody works on any more; safe to run in every process at once. */
  recover(signal?: AbortSignal): Promise<Recovered[]> {
    return this.recovery.recover(signal);
  }
}

/** Fees for the signature besides the priority fee, with room to spare. */
const SIGNATURE_FEES = 10_000n;

/** What a swap the aggregator builds must do to the wallet: none for a transaction the service builds itself. */
function swapExpectation(request: ActionRequest): SwapExpectation | undefined {
  const { build } = request;
  const [quote, priorityLamports] =
    build.kind === 'swap' ? [build.quote, build.priorityLamports] : build.kind === 'trade' ? [build.quote.aggregator, build.options.priorityLamports] : [undefined, 0n];
  if (!quote) return undefined;
  return { user: new PublicKey(request.wallet), quote, feeLamports: priorityLamports + SIGNATURE_FEES };
}
