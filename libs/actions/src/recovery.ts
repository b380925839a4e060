import { ChainError, confirmSignature, isBlockhashExpired, presendCheck, sendAndConfirm, signatureStatus } from '@svc/chain';
import { Rejected } from '@svc/domain';
import type { OutboxRow } from '@svc/vault';
import { newUlid } from '@svc/readmodel';
import { chainFailure, neverLanded } from './refusals';
import type { RecoveryOutcome } from './request';
import { ACTION_LEASE_MS, RETRY_MS, UNSIGNED_CHECK_MS, type PipelineDeps, type Settlement } from './settlement';

export interface Recovered {
  id: string;
  action: string;
  hold_key: string | null;
  outcome: RecoveryOutcome;
}

/**
 * Finishes the rows nobody works on any more (their process died, or the ledger or the RPC failed them): a
 * confirmed transaction is recorded, a failed or expired one is marked failed, an undecided one is resent from
 * the stored bytes (if it would still succeed) and awaited. Safe to run in every process at once.
 */
export class OutboxRecovery {
  constructor(
    private readonly deps: PipelineDeps,
    private readonly settlement: Settlement,
  ) {}

  private get connection() {
    return this.deps.chain().connection;
  }

  async recover(signal?: AbortSignal): Promise<Recovered[]> {
    const settled: Recovered[] = [];
    while (!signal?.aborted) {
      const row = await this.deps.outbox.claimDue(newUlid(), ACTION_LEASE_MS);
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
      if (!(await this.deps.outbox.release(row.id, row.attemptId))) return 'retry_later';
      await this.settlement.freeSpend(row);
      return 'released';
    }
    if (row.state === 'unsigned') {
      let outcome: 'recorded' | 'released' | 'pending';
      try {
        outcome = await this.settlement.settleHandout(row);
      } catch (error) {
        if (error instanceof Rejected) return 'rejected';
        throw error;
      }
      if (outcome === 'pending') await this.deps.outbox.renewLease(row.id, UNSIGNED_CHECK_MS);
      return outcome;
    }
    const signed = this.settlement.signedOf(row);
    // Expiry first: a status read after it is final, since nothing built on that blockhash can land later.
    const expired = await isBlockhashExpired(this.connection, signed.lastValidBlockHeight);
    const status = await signatureStatus(this.connection, signed.signature);
    if (status.state === 'failed') {
      await this.settlement.markFailed(row, { code: 'tx_failed', message: `the transaction landed and failed (${JSON.stringify(status.err)})`, details: { logs: status.logs, signature: signed.signature } });
      return 'failed';
    }
    if (status.state === 'not_found' && expired) {
      this.deps.log.info({ id: row.id, signature: row.signature }, 'transaction never landed; marked failed');
      await this.settlement.markFailed(row, chainFailure(neverLanded()));
      return 'failed';
    }
    if (status.state === 'not_found') {
      const refusal = await presendCheck(this.connection, signed);
      if (refusal) {
        this.deps.log.info({ id: row.id, signature: row.signature, reason: refusal.message }, 'unsent transaction would fail now; marked failed, not sent');
        await this.settlement.markFailed(row, chainFailure(refusal));
        return 'failed';
      }
    }
    if (status.state !== 'confirmed') {
      try {
        if (status.state === 'not_found') await sendAndConfirm(this.connection, signed, { resend: true, abortSignal: signal });
        else await confirmSignature(this.connection, signed, signal);
      } catch (error) {
        if (!(error instanceof ChainError)) throw error;
        await this.settlement.markFailed(row, chainFailure(error));
        return 'failed';
      }
    }
    try {
      await this.settlement.record(row);
    } catch (error) {
      if (error instanceof Rejected) return 'rejected';
      throw error;
    }
    return 'recorded';
  }
}
