import { PublicKey } from '@solana/web3.js';
import { ACTION_LEASE_MS } from '@svc/actions';
import { lamportsToSol, memoInstruction } from '@svc/chain';
import { Rejected, type Citizen } from '@svc/domain';
import { LEDGER_STREAM, type LedgerEntry } from '@svc/ledger';
import { AnchorRunnerStore } from '@svc/marketdata';
import { ensureTreasuryCitizen, type Runtime } from '@svc/runtime';
import { newUlid } from '@svc/readmodel';
import { WorkerLoop } from './loop';

/** What every anchor's memo starts with; then `<seq>:<hash hex>` of the entry it commits to. */
export const ANCHOR_MEMO_PREFIX = 'svc-ledger:v1:';
/** Longer than an action's own lease: a runner stalled inside a send gives that action up before the next may settle it. */
export const ANCHOR_LEASE_MS = 2 * ACTION_LEASE_MS;
/** How often the runner looks whether an anchor is due. */
const CHECK_MS = 5_000;
/** Below this the treasury cannot pay an anchor's fee (5,000 lamports a signature) for long: anchoring waits. */
const MIN_BALANCE_LAMPORTS = 10_000;

export function anchorMemo(seq: number, hash: string): string {
  return `${ANCHOR_MEMO_PREFIX}${seq}:${hash}`;
}

/** The last anchor as the runner counts from it: the entry it committed to, its own record, and when. */
interface Anchored {
  seq: number;
  ledgerSeq: number;
  at: number;
}

export type AnchorOutcome = { anchored: true; seq: number; signature: string } | { anchored: false; reason: string };

export interface RunningAnchors {
  /** One pass now: anchors the head when one is due and no other process holds the runner's lease. */
  runOnce(): Promise<AnchorOutcome>;
  stop(): Promise<void>;
}

/**
 * Commits the ledger to Solana: every ANCHOR_EVERY_ENTRIES entries after the last anchor, or ANCHOR_INTERVAL_MS after
 * it when any entry follows, the treasury sends one SPL Memo `svc-ledger:v1:<seq>:<hash>` naming the head. It goes
 * through the action pipeline, so a crash between send and record is recorded by recovery, once, as an `anchor`
 * action. One process anchors at a time, by a lease row; an unfunded treasury delays anchoring (logged once, shown
 * by /readyz) and stops nothing else.
 */
export async function startAnchorWorker(runtime: Runtime, options: { everyMs?: number } = {}): Promise<RunningAnchors> {
  const worker = new AnchorWorker(runtime, await AnchorRunnerStore.forDatabase(runtime.database.db), options.everyMs ?? CHECK_MS);
  if (runtime.config.anchorEveryEntries > 0) await worker.loop.start();
  return worker;
}

class AnchorWorker implements RunningAnchors {
  readonly loop: WorkerLoop;
  private firstAt: number | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly store: AnchorRunnerStore,
    everyMs: number,
  ) {
    this.loop = new WorkerLoop({
      name: 'anchor worker',
      log: runtime.log,
      retryMs: everyMs,
      pass: async () => {
        await this.runOnce();
        return everyMs;
      },
    });
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  async runOnce(): Promise<AnchorOutcome> {
    if (this.runtime.config.anchorEveryEntries === 0) return { anchored: false, reason: 'anchoring is off (ANCHOR_EVERY_ENTRIES=0)' };
    const treasury = await ensureTreasuryCitizen(this.runtime);
    if (!(await this.due(treasury))) return { anchored: false, reason: 'no anchor is due' };
    const holder = newUlid();
    if (!(await this.store.claim(holder, ANCHOR_LEASE_MS))) return { anchored: false, reason: 'another process anchors' };
    try {
      // What a dead runner sent is settled first: recorded if it landed, so it counts as the last anchor.
      if (!(await this.settleEarlier(treasury))) return { anchored: false, reason: 'an earlier anchor is not settled yet' };
      if (!(await this.due(treasury))) return { anchored: false, reason: 'no anchor is due' };
      if (!(await this.funded(treasury))) return { anchored: false, reason: 'the treasury cannot pay the fee' };
      return await this.anchor(treasury);
    } finally {
      await this.store.release(holder).catch(() => undefined);
    }
  }

  /**
   * The last anchor as the ledger holds it, not as a read model may lag behind it: the outbox row closed with its
   * record names the entry, which says what it anchored and when.
   */
  private async last(treasury: Citizen): Promise<Anchored | undefined> {
    const row = await this.runtime.pipeline.outbox.lastDone(treasury.agentId, 'anchor');
    if (!row?.receipt) return undefined;
    const [stored] = await this.runtime.store.readForward(LEDGER_STREAM, row.receipt.seq, 1);
    if (!stored) return undefined;
    const entry = JSON.parse(stored.data) as LedgerEntry;
    const seq = (entry.data as { details?: { seq?: unknown } }).details?.seq;
    return { seq: typeof seq === 'number' ? seq : -1, ledgerSeq: entry.seq, at: entry.at };
  }

  /** Due once enough entries follow the last anchor's own record, or enough time passed and any entry does. */
  private async due(treasury: Citizen): Promise<boolean> {
    const { anchorEveryEntries, anchorIntervalMs } = this.runtime.config;
    const head = await this.runtime.ledgerHead.head();
    const last = await this.last(treasury);
    const following = head - (last?.ledgerSeq ?? -1);
    if (following <= 0) return false;
    if (following >= anchorEveryEntries) return true;
    if (anchorIntervalMs === 0) return false;
    const since = last?.at ?? (await this.firstEntryAt());
    return this.runtime.clock() - since >= anchorIntervalMs;
  }

  private async firstEntryAt(): Promise<number> {
    if (this.firstAt === undefined) {
      const [first] = await this.runtime.store.readForward(LEDGER_STREAM, 0, 1);
      this.firstAt = first ? (JSON.parse(first.data) as LedgerEntry).at : this.runtime.clock();
    }
    return this.firstAt;
  }

  /** Anchor rows a dead runner left reserved or sent: their leases end now (this process holds the runner's) and recovery settles them. */
  private async settleEarlier(treasury: Citizen): Promise<boolean> {
    const { outbox } = this.runtime.pipeline;
    const left = await outbox.unsettled(treasury.agentId, ['anchor']);
    if (left.length === 0) return true;
    for (const row of left) await outbox.renewLease(row.id, 0);
    await this.runtime.pipeline.recover();
    return (await outbox.unsettled(treasury.agentId, ['anchor'])).length === 0;
  }

  private async funded(treasury: Citizen): Promise<boolean> {
    const balance = await this.runtime.chain.connection.getBalance(new PublicKey(treasury.wallet), 'confirmed');
    if (balance >= MIN_BALANCE_LAMPORTS) {
      await this.store.delay(null);
      return true;
    }
    const reason = `the treasury ${treasury.wallet} holds ${lamportsToSol(BigInt(balance))} SOL, less than an anchor's fee: fund it to anchor the ledger`;
    if (await this.store.delay(reason)) this.runtime.log.warn({ treasury: treasury.wallet, balance_lamports: balance }, 'ledger anchoring delayed: the treasury is unfunded');
    return false;
  }

  private async anchor(treasury: Citizen): Promise<AnchorOutcome> {
    const seq = await this.runtime.ledgerHead.head();
    const [stored] = await this.runtime.store.readForward(LEDGER_STREAM, seq, 1);
    if (!stored) throw new Error(`ledger entry ${seq} cannot be read`);
    const { hash } = JSON.parse(stored.data) as LedgerEntry;
    const memo = anchorMemo(seq, hash);
    const details = { seq, hash, memo };
    try {
      const outcome = await this.runtime.pipeline.run({
        action: 'anchor',
        agentId: treasury.agentId,
        wallet: treasury.wallet,
        sign: true,
        // The same head is anchored once, however often it is decided again (a retry resumes the row it has); the hash
        // is in the key so that a ledger cut back and grown again anew is anchored anew at a seq anchored before.
        idempotencyKey: `anchor:${seq}:${hash}`,
        record: { type: 'RecordAction', agentId: treasury.agentId, data: { action: 'anchor', wallet: treasury.wallet, details }, observe: { wallet: treasury.wallet } },
        summary: details,
        build: { kind: 'instructions', transaction: { instructions: [memoInstruction(memo, new PublicKey(treasury.wallet))] } },
        funds: { lamports: 0n },
      });
      if (!outcome.executed) throw new Error('an anchor was handed out instead of sent');
      this.runtime.log.info({ seq, hash, signature: outcome.signature, ledger_seq: outcome.ledger?.seq }, 'ledger anchored');
      return { anchored: true, seq, signature: outcome.signature };
    } catch (error) {
      if (error instanceof Rejected && error.code === 'insufficient') {
        await this.store.delay(`the treasury ${treasury.wallet} cannot pay an anchor's fee: fund it to anchor the ledger`);
        return { anchored: false, reason: error.message };
      }
      throw error;
    }
  }
}
