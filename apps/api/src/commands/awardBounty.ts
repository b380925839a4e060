import { Keypair, VersionedTransaction } from '@solana/web3.js';
import { monotonicFactory } from 'ulid';
import {
  ChainError,
  assertCanPay,
  buildSolTransfer,
  confirmSignature,
  encodeUnsigned,
  explorerUrl,
  feeLamports,
  findTransferByReference,
  isBlockhashExpired,
  isRpcUnreachable,
  keypairFromSecret,
  recentBlockhash,
  sendAndConfirm,
  signTransaction,
  signatureStatus,
  solToLamports,
  solTransfersOf,
  toChainError,
  type SignedTransaction,
} from '@svc/chain';
import { planAward, type AwardPlan } from '@svc/domain';
import { LEDGER_STREAM, type LedgerEntry } from '@svc/ledger';
import type { AwardOutboxRow } from '@svc/vault';
import { ApiError, fromRejection } from '../http/errors';
import type { Services } from '../services';

const ulid = monotonicFactory();

/**
 * How long the process that reserved a payment works on it before a recovery pass may take it over:
 * longer than a blockhash lives (150 blocks, 60-90 s) plus the confirmation, so a live sender is never
 * second-guessed.
 */
export const AWARD_LEASE_MS = 120_000;
/** When a recovery pass could not settle a payment (RPC or ledger unreachable), it looks again after this. */
export const AWARD_RETRY_MS = 30_000;
/** How soon a recovery pass looks on-chain for an unsigned payment the poster may have sent by now. */
export const UNSIGNED_CHECK_MS = 5_000;
/**
 * Slots before the one read at hand-out that the search for an unsigned payment still covers: RPC nodes
 * behind one URL may disagree a little about the current slot, and a missed payment could be paid twice.
 */
const SLOT_MARGIN = 150;

export interface AwardInput {
  bountyId: string;
  submissionId: string;
  execute: boolean;
}

function winnerOf(plan: AwardPlan) {
  return { id: plan.winner.agentId, handle: plan.winner.handle, wallet: plan.winner.wallet };
}

/** The award as the ledger head sees it now (another API process may have appended since this one looked). */
async function planAtHead(services: Services, agentId: string, bountyId: string, submissionId: string): Promise<AwardPlan> {
  await services.writer.sync();
  const planned = services.writer.view((state) => planAward(state.bounties, state.citizens, agentId, bountyId, submissionId));
  if (!planned.ok) throw fromRejection(planned.rejection);
  return planned.plan;
}

function heldBy(holder: AwardOutboxRow): ApiError {
  if (holder.state === 'done' || holder.state === 'rejected') {
    return new ApiError(409, 'bounty_closed', `bounty ${holder.bountyId} is already awarded`, holder.signature ? { signature: holder.signature } : {});
  }
  if (holder.state === 'unsigned') {
    return new ApiError(
      409,
      'bounty_closed',
      `an unsigned award of bounty ${holder.bountyId} (submission ${holder.submissionId}) is outstanding until block height ` +
        `${holder.lastValidBlockHeight}: sign and send it, or award again once it has expired`,
      { reference: holder.reference, last_valid_block_height: holder.lastValidBlockHeight },
    );
  }
  return new ApiError(409, 'bounty_closed', `an award for bounty ${holder.bountyId} is in progress`);
}

/** The RPC could not be reached; `what` says what that means for the award. */
function rpcUnavailable(error: unknown, what = 'nothing was paid, try again'): ApiError {
  return new ApiError(503, 'unavailable', `the Solana RPC could not be reached (${(error as Error).message}); ${what}`, {}, { 'Retry-After': '5' });
}

/** Errors before anything was sent: what the chain said, an unreachable RPC, or our own fault (500). */
function beforeSend(error: unknown): unknown {
  const known = toChainError(error);
  if (known) return fromRejection(known.rejection);
  if (!(error instanceof ApiError) && isRpcUnreachable(error)) return rpcUnavailable(error);
  return error;
}

/**
 * POST /api/v1/bounties/{id}/award. Decide at the ledger head, reserve the bounty's one payment in the
 * outbox, check the poster can pay, store the signed transfer, send and confirm it, then record the award.
 * Every step before the send undoes the reservation on failure; after the send only the chain's verdict
 * does (a failed or expired transfer), and an unknown outcome is left to the recovery pass.
 */
export async function awardBounty(services: Services, agentId: string, input: AwardInput) {
  const { bountyId, submissionId } = input;
  const plan = await planAtHead(services, agentId, bountyId, submissionId);
  const lamports = solToLamports(plan.rewardSol);
  const summary = { bounty_id: bountyId, submission_id: submissionId, winner: winnerOf(plan), reward_sol: plan.rewardSol };
  const connection = services.chain.connection;

  // The service cannot sign for a self-custody wallet: such a poster always gets the unsigned payment.
  if (!input.execute || plan.poster.custody === 'self') return awardUnsigned(services, agentId, input, plan, summary);

  const attemptId = `award_${ulid()}`;
  const reservation = { bountyId, attemptId, posterId: agentId, submissionId, leaseMs: AWARD_LEASE_MS };
  let reserved = await services.awardOutbox.reserve(reservation);
  // An unsigned payment handed out earlier holds the bounty: it may have landed, or expired, by now.
  if (!reserved.ok && reserved.holder.state === 'unsigned' && (await settleForCaller(services, reserved.holder)) === 'released') {
    reserved = await services.awardOutbox.reserve(reservation);
  }
  if (!reserved.ok) throw heldBy((await services.awardOutbox.get(bountyId)) ?? reserved.holder);

  let signed: SignedTransaction;
  try {
    // The bounty may have been awarded (and its reservation settled) between the first look and the insert.
    await planAtHead(services, agentId, bountyId, submissionId);
    const secret = await services.vault.walletSecret(agentId);
    if (!secret) throw new Error(`no custody secret for ${agentId}`);
    const keypair = keypairFromSecret(secret);
    if (keypair.publicKey.toBase58() !== plan.poster.wallet) throw new Error(`the custody secret of ${agentId} does not match its wallet`);
    const recent = await recentBlockhash(connection);
    const transfer = buildSolTransfer({ from: keypair.publicKey, to: plan.winner.wallet, lamports }, recent);
    await assertCanPay(connection, keypair.publicKey, { lamports, fee: await feeLamports(connection, transfer) });
    signed = signTransaction(transfer, [keypair], recent);
    const stored = await services.awardOutbox.recordSigned(bountyId, attemptId, {
      signature: signed.signature,
      transaction: Buffer.from(signed.wire).toString('base64'),
      blockhash: signed.blockhash,
      lastValidBlockHeight: signed.lastValidBlockHeight,
      leaseMs: AWARD_LEASE_MS,
    });
    if (!stored) throw new ApiError(409, 'bounty_closed', `an award for bounty ${bountyId} is in progress`);
  } catch (error) {
    await release(services, bountyId, attemptId);
    throw beforeSend(error);
  }

  try {
    await sendAndConfirm(connection, signed);
  } catch (error) {
    // Only the chain's verdict frees the bounty; anything else (a network fault, a payment processed but not
    // confirmed when its blockhash expired) may still land.
    if (error instanceof ChainError) {
      await release(services, bountyId, attemptId);
      throw fromRejection(error.rejection);
    }
    // Sent, but whether it landed is unknown: the recovery pass settles it from the stored transaction.
    services.log.warn({ err: error, bounty_id: bountyId, signature: signed.signature }, 'award payment outcome unknown; left to recovery');
    await services.awardOutbox.renewLease(bountyId, attemptId, 0).catch(() => undefined);
    throw unsettled(signed.signature, 'its confirmation could not be seen');
  }

  let receipt: { seq: number; hash: string };
  try {
    receipt = await recordPaidAward(services, { bountyId, submissionId, posterId: agentId, signature: signed.signature });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    services.log.error({ err: error, bounty_id: bountyId, signature: signed.signature }, 'award paid but not yet recorded; left to recovery');
    await services.awardOutbox.renewLease(bountyId, attemptId, 0).catch(() => undefined);
    throw unsettled(signed.signature, 'it could not be written to the ledger yet');
  }
  return {
    ...summary,
    signature: signed.signature,
    explorer: explorerUrl(signed.signature, connection.rpcEndpoint),
    executed: true as const,
    ledger: receipt,
  };
}

/**
 * execute=false, or a self-custody poster: hand out the unsigned payment, and hold the bounty for it until it
 * lands or its blockhash expires. The transfer carries a fresh reference key, so it is found on-chain however
 * the poster sends it, and recorded then (by a recovery pass, or by the next award call). Asking again for
 * the same submission while it is outstanding gives the same transaction.
 */
async function awardUnsigned(services: Services, agentId: string, input: AwardInput, plan: AwardPlan, summary: Record<string, unknown>) {
  const { bountyId, submissionId } = input;
  const { connection } = services.chain;
  const handedOut = (row: AwardOutboxRow) => ({
    ...summary,
    executed: false as const,
    transaction: row.transaction!,
    fee_payer: plan.poster.wallet,
    reference: row.reference!,
    last_valid_block_height: row.lastValidBlockHeight!,
  });
  const outstanding = async (holder: AwardOutboxRow) => {
    if (holder.state !== 'unsigned') throw heldBy(holder);
    const outcome = await settleForCaller(services, holder);
    if (outcome === 'recorded') throw heldBy((await services.awardOutbox.get(bountyId)) ?? holder);
    if (outcome === 'pending' && holder.submissionId === submissionId) return handedOut(holder);
    if (outcome === 'pending') throw heldBy(holder);
    return undefined;
  };

  const holder = await services.awardOutbox.get(bountyId);
  if (holder) {
    const again = await outstanding(holder);
    if (again) return again;
  }
  const lamports = solToLamports(plan.rewardSol);
  const reference = Keypair.generate().publicKey.toBase58();
  let row: AwardOutboxRow;
  try {
    // Read before the blockhash: the payment can only land after both.
    const minSlot = Math.max(0, (await connection.getSlot('confirmed')) - SLOT_MARGIN);
    const recent = await recentBlockhash(connection);
    const unsigned = buildSolTransfer({ from: plan.poster.wallet, to: plan.winner.wallet, lamports, reference }, recent);
    await assertCanPay(connection, plan.poster.wallet, { lamports, fee: await feeLamports(connection, unsigned) });
    row = {
      bountyId,
      attemptId: `award_${ulid()}`,
      posterId: agentId,
      submissionId,
      state: 'unsigned',
      signature: null,
      transaction: encodeUnsigned(unsigned),
      reference,
      minSlot,
      blockhash: recent.blockhash,
      lastValidBlockHeight: recent.lastValidBlockHeight,
      leaseUntil: new Date(),
      error: null,
    };
  } catch (error) {
    throw beforeSend(error);
  }
  const reserved = await services.awardOutbox.reserveUnsigned({
    ...row,
    transaction: row.transaction!,
    reference,
    blockhash: row.blockhash!,
    lastValidBlockHeight: row.lastValidBlockHeight!,
    minSlot: row.minSlot!,
    leaseMs: UNSIGNED_CHECK_MS,
  });
  if (!reserved.ok) {
    // Another call took the slot between the look and the insert.
    const again = await outstanding(reserved.holder);
    if (again) return again;
    throw heldBy(reserved.holder);
  }
  return handedOut(row);
}

/**
 * Where an unsigned payment stands: landed (then recorded like any sent payment), expired without landing
 * (the bounty is freed), or still able to land.
 */
async function settleUnsigned(services: Services, row: AwardOutboxRow): Promise<'recorded' | 'released' | 'pending'> {
  const { connection } = services.chain;
  const [transfer] = solTransfersOf(VersionedTransaction.deserialize(Buffer.from(row.transaction!, 'base64')).message);
  if (!transfer) throw new Error(`award outbox row of ${row.bountyId} holds no transfer`);
  // Expiry first: a lookup after it is final, since nothing built on that blockhash can land later.
  const expired = await isBlockhashExpired(connection, row.lastValidBlockHeight!);
  const sent = await findTransferByReference(connection, { ...transfer, reference: row.reference! }, row.minSlot ?? 0);
  if (sent) {
    const marked = await services.awardOutbox.markUnsignedSent(row.bountyId, row.attemptId, {
      signature: sent.signature,
      transaction: Buffer.from(sent.wire).toString('base64'),
      leaseMs: AWARD_LEASE_MS,
    });
    if (marked || (await services.awardOutbox.get(row.bountyId))?.signature === sent.signature) {
      await recordPaidAward(services, { bountyId: row.bountyId, submissionId: row.submissionId, posterId: row.posterId, signature: sent.signature });
    }
    return 'recorded';
  }
  if (expired) {
    await services.awardOutbox.release(row.bountyId, row.attemptId);
    return 'released';
  }
  return 'pending';
}

/** settleUnsigned for a request: an RPC it cannot reach is a 503 (the bounty stays held), not a 500. */
async function settleForCaller(services: Services, row: AwardOutboxRow): Promise<'recorded' | 'released' | 'pending'> {
  try {
    return await settleUnsigned(services, row);
  } catch (error) {
    if (!(error instanceof ApiError) && isRpcUnreachable(error)) {
      throw rpcUnavailable(error, `the unsigned award of bounty ${row.bountyId} handed out earlier still holds it until it can be checked; try again`);
    }
    throw error;
  }
}

/** Frees the bounty after a payment that did not happen; if even that fails, the recovery pass frees it when the lease ends. */
async function release(services: Services, bountyId: string, attemptId: string): Promise<void> {
  await services.awardOutbox.release(bountyId, attemptId).catch((err) => services.log.warn({ err, bounty_id: bountyId }, 'award reservation not released; recovery will'));
}

function unsettled(signature: string, why: string): ApiError {
  return new ApiError(
    503,
    'unavailable',
    `the payment ${signature} was sent but ${why}; the award is recorded automatically once the payment confirms, ` +
      'or the bounty reopens if it never lands',
    { signature },
  );
}

/**
 * Appends the award for a confirmed payment and closes its outbox row. A record that already landed (the
 * recovery pass or a retry got there first) answers the receipt it has.
 */
async function recordPaidAward(
  services: Services,
  paid: { bountyId: string; submissionId: string; posterId: string; signature: string },
): Promise<{ seq: number; hash: string }> {
  // A refusal is only final at the true head: a process that has not seen the bounty (it was posted
  // through another one) would refuse it as not found without ever touching the store.
  await services.writer.sync();
  const outcome = await services.writer.execute({
    type: 'AwardBounty',
    agentId: paid.posterId,
    data: { bounty_id: paid.bountyId, submission_id: paid.submissionId, signature: paid.signature },
  });
  if (!outcome.ok) {
    services.log.error({ bounty_id: paid.bountyId, signature: paid.signature, rejection: outcome.rejection }, 'award paid on-chain but the ledger refused it');
    await services.awardOutbox.markRejected(paid.bountyId, paid.signature, `${outcome.rejection.code}: ${outcome.rejection.message}`);
    throw fromRejection({ ...outcome.rejection, details: { ...outcome.rejection.details, signature: paid.signature } });
  }
  await services.awardOutbox.markDone(paid.bountyId, paid.signature);
  const awarded = outcome.entries.at(-1);
  return awarded ? { seq: awarded.seq, hash: awarded.hash } : recordedReceipt(services, paid.signature);
}

/** The BountyAwarded entry of a recorded payment: it follows the payment's ActionRecorded entry. */
async function recordedReceipt(services: Services, signature: string): Promise<{ seq: number; hash: string }> {
  const actionSeq = services.writer.view((state) => state.actions.bySignature.get(signature));
  if (actionSeq === undefined) throw new Error(`award payment ${signature} is not on the ledger`);
  const [stored] = await services.store.readForward(LEDGER_STREAM, actionSeq + 1, 1);
  const entry = JSON.parse(stored!.data) as LedgerEntry;
  return { seq: entry.seq, hash: entry.hash };
}

export type RecoveryOutcome = 'recorded' | 'released' | 'rejected' | 'pending' | 'retry_later';

/**
 * Finishes the award payments that an API process left unsettled (it crashed, or the ledger or the RPC
 * failed it): a confirmed payment is recorded, a failed or expired one frees its bounty, an undecided
 * one is resent from the stored bytes and awaited. Safe to run in every process at once.
 */
export async function recoverAwards(services: Services, signal?: AbortSignal): Promise<Array<{ bounty_id: string; outcome: RecoveryOutcome }>> {
  const settled: Array<{ bounty_id: string; outcome: RecoveryOutcome }> = [];
  while (!signal?.aborted) {
    const row = await services.awardOutbox.claimDue(`award_${ulid()}`, AWARD_LEASE_MS);
    if (!row) break;
    let outcome: RecoveryOutcome;
    try {
      outcome = await settle(services, row, signal);
    } catch (error) {
      services.log.warn({ err: error, bounty_id: row.bountyId, signature: row.signature }, 'award recovery will retry');
      await services.awardOutbox.renewLease(row.bountyId, row.attemptId, AWARD_RETRY_MS);
      outcome = 'retry_later';
    }
    settled.push({ bounty_id: row.bountyId, outcome });
  }
  return settled;
}

async function settle(services: Services, row: AwardOutboxRow, signal?: AbortSignal): Promise<RecoveryOutcome> {
  const { connection } = services.chain;
  if (row.state === 'reserved') {
    // Nothing was signed, so nothing can have been sent.
    await services.awardOutbox.release(row.bountyId, row.attemptId);
    return 'released';
  }
  if (row.state === 'unsigned') {
    let outcome: 'recorded' | 'released' | 'pending';
    try {
      outcome = await settleUnsigned(services, row);
    } catch (error) {
      if (error instanceof ApiError) return 'rejected';
      throw error;
    }
    if (outcome === 'pending') await services.awardOutbox.renewLease(row.bountyId, row.attemptId, UNSIGNED_CHECK_MS);
    return outcome;
  }
  if (!row.signature || !row.transaction || !row.blockhash || row.lastValidBlockHeight === null) {
    throw new Error(`award outbox row of ${row.bountyId} is sent but lacks its transaction`);
  }
  const signed: SignedTransaction = {
    signature: row.signature,
    wire: Buffer.from(row.transaction, 'base64'),
    blockhash: row.blockhash,
    lastValidBlockHeight: row.lastValidBlockHeight,
  };
  // Expiry first: a status read after it is final, since nothing built on that blockhash can land later.
  const expired = await isBlockhashExpired(connection, signed.lastValidBlockHeight);
  const status = await signatureStatus(connection, signed.signature);
  if (status.state === 'failed' || (status.state === 'not_found' && expired)) {
    services.log.info({ bounty_id: row.bountyId, signature: row.signature, status: status.state }, 'award payment never landed; bounty open again');
    await services.awardOutbox.release(row.bountyId, row.attemptId);
    return 'released';
  }
  if (status.state !== 'confirmed') {
    try {
      if (status.state === 'not_found') await sendAndConfirm(connection, signed, { resend: true, abortSignal: signal });
      else await confirmSignature(connection, signed, signal);
    } catch (error) {
      if (!(error instanceof ChainError)) throw error;
      await services.awardOutbox.release(row.bountyId, row.attemptId);
      return 'released';
    }
  }
  try {
    await recordPaidAward(services, { bountyId: row.bountyId, submissionId: row.submissionId, posterId: row.posterId, signature: signed.signature });
  } catch (error) {
    if (error instanceof ApiError) return 'rejected';
    throw error;
  }
  return 'recorded';
}

/** Runs a recovery pass now and every `everyMs` in this process, one pass at a time. */
export function startAwardRecovery(services: Services, everyMs = 30_000): { stop(): Promise<void> } {
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  const pass = () => {
    if (running) return;
    running = recoverAwards(services, controller.signal)
      .then((settled) => {
        if (settled.length > 0) services.log.info({ settled }, 'award recovery pass');
      })
      .catch((error) => {
        if (!controller.signal.aborted) services.log.error({ err: error }, 'award recovery pass failed');
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

