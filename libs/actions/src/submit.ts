import type { VersionedTransaction } from '@solana/web3.js';
import { signatureOf, type SignedTransaction } from '@svc/chain';
import { Rejected } from '@svc/domain';
import type { OutboxRow } from '@svc/vault';
import { newUlid } from '@svc/readmodel';
import { messageHash } from './handout';
import type { ActionOutcome } from './request';
import { ACTION_LEASE_MS, type PipelineDeps, type Settlement } from './settlement';

/**
 * Transactions their signer built or signed (`/tx/submit`): one the service handed out is recorded as the action
 * it was handed out for; any other as a plain `submit`. The row is written before the send.
 */
export class Submissions {
  constructor(
    private readonly deps: PipelineDeps,
    private readonly settlement: Settlement,
  ) {}

  private get connection() {
    return this.deps.chain().connection;
  }

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
        const resumed = await this.settlement.resume(row);
        if (resumed) return resumed;
      }
    }
    if (!row) {
      const programs = programsOf(transaction);
      const inserted = await this.deps.outbox.insertSent({
        id: `act_${newUlid()}`,
        attemptId: newUlid(),
        agentId,
        action: 'submit',
        record: { type: 'RecordAction', agentId, data: { action: 'submit', wallet, details: { programs } } },
        summary: { programs },
        leaseMs: ACTION_LEASE_MS,
        signature: signed.signature,
        transaction: wire,
        messageHash: messageHash(transaction.message),
        blockhash: signed.blockhash,
        lastValidBlockHeight: signed.lastValidBlockHeight,
      });
      row = inserted.ok ? await this.deps.outbox.bySignature(signed.signature) : inserted.holder;
      if (!inserted.ok) return (await this.settlement.resume(row!))!;
    }
    return this.settlement.sendAndRecord(row!, signed, false);
  }

  /** The row of the handout this transaction signs: the exact message. */
  async handedOutFor(agentId: string, transaction: VersionedTransaction): Promise<OutboxRow | undefined> {
    return this.deps.outbox.byMessage(agentId, messageHash(transaction.message));
  }

  private async lastValidHeightOf(blockhash: string): Promise<number> {
    // A blockhash is valid for 150 blocks after the block that made it; the RPC does not say which one that
    // was, so count from now, which only ever waits longer than needed.
    const valid = await this.connection.isBlockhashValid(blockhash, { commitment: 'confirmed' });
    const height = await this.connection.getBlockHeight('confirmed');
    if (!valid.value) throw new Rejected('send_failed', `the transaction's blockhash ${blockhash} is unknown or expired: build it on a recent one`);
    return height + 150;
  }
}

function programsOf(transaction: VersionedTransaction): string[] {
  const keys = transaction.message.staticAccountKeys;
  return [...new Set(transaction.message.compiledInstructions.map((ix) => keys[ix.programIdIndex]?.toBase58() ?? 'lookup'))];
}
