import { PublicKey, type AccountInfo, type Connection } from '@solana/web3.js';
import { AccountLayout, NATIVE_MINT, TOKEN_PROGRAM_ID, createBurnCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { OnlinePumpSdk, creatorVaultPda, feeSharingConfigPda, userVolumeAccumulatorPda } from '@pump-fun/pump-sdk';
import { coinCreatorVaultAtaPda, coinCreatorVaultAuthorityPda, userVolumeAccumulatorPda as poolVolumeAccumulatorPda } from '@pump-fun/pump-swap-sdk';
import { ACTION_LEASE_MS, type ActionOutcome, type Build, type ObserveSpec } from '@svc/actions';
import { ACCOUNTS_PER_CALL, lamportsToSol, mintInfo, rawToUi, readMarket, solToLamports, tokenBalanceRaw } from '@svc/chain';
import { Rejected, treasuryFlowOf, type ActionName, type ActionRecordedData, type Citizen } from '@svc/domain';
import { LEDGER_STREAM, type LedgerEntry } from '@svc/ledger';
import { TreasuryCycleStore, type LastCycle } from '@svc/marketdata';
import { treasury as treasuryModel } from '@svc/projections';
import { ensureTreasuryCitizen, serviceTokenMint, type Runtime } from '@svc/runtime';
import { newUlid } from '@svc/readmodel';
import { WorkerLoop, WorkerStopping, renewWhileHeld } from './loop';

/**
 * How long a cycle's claim lasts without renewal; the worker renews it at every step and a third of this apart.
 * Longer than an action's own lease: a process stalled inside a send gives that action up before another
 * process may take the cycle over and settle what it left.
 */
export const TREASURY_LEASE_MS = 2 * ACTION_LEASE_MS;
/** The codes by which the chain refused one distribution, which the cycle may step past. */
const CHAIN_REFUSALS = new Set(['send_failed', 'tx_failed', 'insufficient']);
/** Fee distributions one cycle sends at most, the coins with the most waiting for the treasury first. */
export const DISTRIBUTIONS_PER_CYCLE = 10;
/** A coin is distributed only when the treasury's share pays more than the transaction's network fee. */
const MIN_SHARE_LAMPORTS = 10_000n;
const BUY_PRIORITY_LAMPORTS = 100_000n;
/** The actions a cycle sends; an unsettled one of these belongs to a cycle whose process is gone. */
const CYCLE_ACTIONS: readonly ActionName[] = ['fee_distribution', 'buyback', 'burn'];

/**
 * Test-only: set to `1` in a process's environment, it kills that process with SIGKILL right after a buyback
 * confirmed and was recorded, before its burn, so a test can show that the next cycle burns what it bought.
 */
export const SIGKILL_AFTER_BUY_ENV = 'TEST_ONLY_TREASURY_SIGKILL_AFTER_BUY';

export type CycleOutcome = { ran: true; cycle: LastCycle } | { ran: false; reason: string };

/** Knobs with production defaults; tests run cycles themselves through runCycle. */
export interface TreasuryTuning {
  /** A cycle this often (default TREASURY_CYCLE_MS); 0: only when runCycle is called. */
  everyMs?: number;
  /** Called after each scheduled cycle, whatever came of it. */
  onCycle?: (outcome: CycleOutcome) => void;
}

export interface RunningTreasury {
  /**
   * Runs one cycle now, unless another process (or this one) is running one: then it answers `ran: false` and does
   * nothing. Throws what stopped a cycle that failed (its last_cycle says so too).
   */
  runCycle(): Promise<CycleOutcome>;
  stop(): Promise<void>;
}

/** What one cycle did, in lamports and base units until it is shown. */
class Tally {
  received = 0n;
  spent = 0n;
  bought = 0n;
  burned = 0n;
  decimals = 6;
  readonly signatures: string[] = [];
  skipped: string | null = null;

  add(data: ActionRecordedData): void {
    const flow = treasuryFlowOf(data);
    this.received += flow.received_lamports;
    this.spent += flow.spent_lamports;
    this.bought += flow.bought_raw;
    this.burned += flow.burned_raw;
    this.signatures.push(data.signature);
  }

  view(cycle: number, at: number): LastCycle {
    return {
      cycle,
      at,
      distributed_sol: lamportsToSol(this.received),
      sol_spent: lamportsToSol(this.spent),
      tokens_bought: rawToUi(this.bought, this.decimals),
      tokens_burned: rawToUi(this.burned, this.decimals),
      signatures: this.signatures,
      skipped_reason: this.skipped,
    };
  }
}

/**
 * The treasury's buyback-and-burn, in `apps/workers`. A cycle, run by one process at a time (a lease on one row):
 *
 * 1. burns whatever service token the treasury holds: what a cycle that died between its buy and its burn left;
 * 2. distributes the waiting creator fees of the coins that share with the treasury (pump's
 *    `distribute_creator_fees`, when above its minimum), which pays every shareholder, the treasury its 10%;
 * 3. when its SOL above the reserve reaches the threshold, spends all of it on the service token, on whatever
 *    venue trades it (curve, pool or aggregator), with a floor enforced on-chain;
 * 4. burns what it bought.
 *
 * Every transaction is an action of @treasury on the ledger (`fee_distribution`, `buyback`, `burn`) with its
 * signature and what the chain showed it moved; a buyback is announced as kind `buyback` on /ws and doorbells.
 */
export async function startTreasuryWorker(runtime: Runtime, tuning: TreasuryTuning = {}): Promise<RunningTreasury> {
  const worker = new TreasuryWorker(runtime, await new TreasuryCycleStore(runtime.database.db).init(), tuning);
  await worker.start();
  return worker;
}

class TreasuryWorker implements RunningTreasury {
  private readonly everyMs: number;
  private readonly loop: WorkerLoop;

  constructor(
    private readonly runtime: Runtime,
    private readonly store: TreasuryCycleStore,
    private readonly tuning: TreasuryTuning,
  ) {
    this.everyMs = tuning.everyMs ?? runtime.config.treasuryCycleMs;
    this.loop = new WorkerLoop({ name: 'treasury worker', log: runtime.log, pass: () => this.scheduledCycle(), retryMs: this.everyMs });
  }

  private get connection(): Connection {
    return this.runtime.chain.connection;
  }

  async start(): Promise<void> {
    // @treasury exists from the first start of any process that runs cycles, whether or not a cycle ever runs.
    await ensureTreasuryCitizen(this.runtime).catch((error) => this.runtime.log.error({ err: error }, 'the treasury is not on the ledger; its cycles will fail'));
    if (this.everyMs > 0) await this.loop.start();
  }

  /** The cycle of the period, when it is due and no other process runs one. */
  private async scheduledCycle(): Promise<number> {
    const outcome = await this.cycle(true);
    if (outcome.ran) this.runtime.log.info({ last_cycle: outcome.cycle }, 'treasury cycle');
    this.tuning.onCycle?.(outcome);
    return this.everyMs;
  }

  runCycle(): Promise<CycleOutcome> {
    return this.cycle(false);
  }

  private async cycle(scheduled: boolean): Promise<CycleOutcome> {
    const holder = newUlid();
    const n = await this.store.claim(holder, TREASURY_LEASE_MS, scheduled ? this.everyMs : undefined);
    if (n === undefined) return { ran: false, reason: scheduled ? 'no cycle is due, or another process is running it' : 'another process is running a cycle' };
    const at = Date.now();
    const tally = new Tally();
    // A renewal the heartbeat could not make means another process may own the cycle: the next step stops.
    const lease = renewWhileHeld(() => this.store.renew(holder, n, TREASURY_LEASE_MS), TREASURY_LEASE_MS, this.runtime.log, 'treasury cycle');
    const keep = async () => {
      this.loop.signal.throwIfAborted();
      if (lease.lost || !(await this.store.renew(holder, n, TREASURY_LEASE_MS))) throw new Error(`cycle ${n} lost its lease to another process`);
    };
    try {
      await this.steps(n, tally, keep);
    } catch (error) {
      const stopped = error instanceof WorkerStopping;
      tally.skipped = stopped ? 'stopped before it finished; the next cycle burns what it bought' : `failed: ${(error as Error).message}`;
      await this.store.finish(holder, n, tally.view(n, at)).catch(() => undefined);
      if (stopped) return { ran: true, cycle: tally.view(n, at) };
      throw error;
    } finally {
      lease.stop();
    }
    const last = tally.view(n, at);
    await this.store.finish(holder, n, last);
    return { ran: true, cycle: last };
  }

  private async steps(n: number, tally: Tally, keep: () => Promise<void>): Promise<void> {
    const treasury = await ensureTreasuryCitizen(this.runtime);
    const token = await serviceTokenMint(this.runtime);
    if (!token) {
      tally.skipped = 'no service token: set TREASURY_TOKEN_MINT';
      return;
    }
    if (!(await this.settleEarlierCycles(treasury))) {
      tally.skipped = 'a transaction of an earlier cycle is not settled yet; the next cycle looks again';
      return;
    }
    const mint = new PublicKey(token);
    await keep();
    await this.burnHeld(treasury, tally, mint, n, 'left_over');
    await this.distribute(treasury, tally, n, keep);
    await keep();
    if (!(await this.buy(treasury, tally, mint, n))) return;
    if (process.env[SIGKILL_AFTER_BUY_ENV] === '1') process.kill(process.pid, 'SIGKILL');
    await keep();
    await this.burnHeld(treasury, tally, mint, n, 'bought');
  }

  /**
   * A cycle's actions left reserved or sent belong to a process that is gone (this one holds the lease now): their
   * leases end now and recovery settles them, recording any that confirmed, so what they bought is known.
   */
  private async settleEarlierCycles(treasury: Citizen): Promise<boolean> {
    const { outbox } = this.runtime.pipeline;
    const left = await outbox.unsettled(treasury.agentId, CYCLE_ACTIONS);
    if (left.length === 0) return true;
    for (const row of left) await outbox.renewLease(row.id, 0);
    await this.runtime.pipeline.recover();
    return (await outbox.unsettled(treasury.agentId, CYCLE_ACTIONS)).length === 0;
  }

  /** Sends one treasury action and adds what the ledger recorded of it (the chain's figures) to the tally. */
  private async act(
    treasury: Citizen,
    tally: Tally,
    action: ActionName,
    details: Record<string, unknown>,
    build: Build,
    options: { observe?: ObserveSpec; lamports?: bigint; balance?: bigint } = {},
  ): Promise<void> {
    const outcome = await this.runtime.pipeline.run({
      action,
      agentId: treasury.agentId,
      wallet: treasury.wallet,
      sign: true,
      record: { type: 'RecordAction', agentId: treasury.agentId, data: { action, wallet: treasury.wallet, details }, observe: options.observe },
      summary: details,
      build,
      funds: { lamports: options.lamports ?? 0n, balance: options.balance },
    });
    tally.add(await this.recorded(outcome));
  }

  private async recorded(outcome: ActionOutcome): Promise<ActionRecordedData> {
    if (!outcome.executed || !outcome.ledger) throw new Error(`the ${outcome.action} is not on the ledger`);
    const [stored] = await this.runtime.store.readForward(LEDGER_STREAM, outcome.ledger.seq, 1);
    return (JSON.parse(stored!.data) as LedgerEntry).data as unknown as ActionRecordedData;
  }

  /** Burns the treasury's whole balance of the service token; its token account stays open for the next buy. */
  private async burnHeld(treasury: Citizen, tally: Tally, mint: PublicKey, cycle: number, reason: 'left_over' | 'bought'): Promise<void> {
    const owner = new PublicKey(treasury.wallet);
    const info = await mintInfo(this.connection, mint);
    tally.decimals = info.decimals;
    const held = await tokenBalanceRaw(this.connection, owner, mint, info.programId);
    if (held === 0n) return;
    const account = getAssociatedTokenAddressSync(mint, owner, true, info.programId);
    const details = {
      mint: mint.toBase58(),
      burned_tokens: rawToUi(held, info.decimals),
      burned_raw: held.toString(),
      supply_before: rawToUi(info.supply, info.decimals),
      supply_after_estimate: rawToUi(info.supply - held, info.decimals),
      closed_token_account: false,
      decimals: info.decimals,
      reason,
      cycle,
    };
    await this.act(treasury, tally, 'burn', details, {
      kind: 'instructions',
      transaction: { instructions: [createBurnCheckedInstruction(account, mint, owner, held, info.decimals, [], info.programId)] },
    });
  }

  private async distribute(treasury: Citizen, tally: Tally, cycle: number, keep: () => Promise<void>): Promise<void> {
    const { db, schema } = this.runtime.readModel;
    const coins = await treasuryModel.sharingCoins(db, schema, treasury.wallet);
    if (coins.length === 0) return;
    const pending = await waitingFees(this.connection, coins.map((c) => new PublicKey(c.mint)));
    const worth = coins
      .map((coin, i) => ({ ...coin, share: (pending[i]! * BigInt(coin.share_bps)) / 10_000n }))
      .filter((coin) => coin.share >= MIN_SHARE_LAMPORTS)
      .sort((a, b) => (b.share > a.share ? 1 : b.share < a.share ? -1 : 0))
      .slice(0, DISTRIBUTIONS_PER_CYCLE);
    if (worth.length === 0) return;
    const owner = new PublicKey(treasury.wallet);
    const pump = new OnlinePumpSdk(this.connection);
    for (const coin of worth) {
      await keep();
      const mint = new PublicKey(coin.mint);
      // pump's own view of the vaults: below its minimum a distribution would be refused on-chain.
      const minimum = await pump.getMinimumDistributableFee(mint, owner);
      if (!minimum.canDistribute) continue;
      const { instructions, isGraduated } = await pump.buildDistributeCreatorFeesInstructions(mint);
      const details = {
        mint: coin.mint,
        graduated: isGraduated,
        distributable_sol: lamportsToSol(BigInt(minimum.distributableFees.toString())),
        treasury_share_bps: coin.share_bps,
        cycle,
      };
      try {
        await this.act(treasury, tally, 'fee_distribution', details, { kind: 'instructions', transaction: { instructions } }, { observe: { wallet: treasury.wallet } });
      } catch (error) {
        // One coin the chain refuses (its vault moved since it was read) does not hold up the others or the buyback;
        // anything else (a confirmed distribution the ledger would not record, an unreachable chain) stops the cycle.
        if (!(error instanceof Rejected) || !CHAIN_REFUSALS.has(error.code)) throw error;
        this.runtime.log.warn({ err: error, mint: coin.mint }, 'treasury fee distribution refused');
      }
    }
  }

  /** Spends the SOL above the reserve on the service token; false (and why) when there is not enough of it. */
  private async buy(treasury: Citizen, tally: Tally, mint: PublicKey, cycle: number): Promise<boolean> {
    const { config } = this.runtime;
    const owner = new PublicKey(treasury.wallet);
    const venue = await readMarket(this.connection, this.runtime.chain.aggregator, mint, owner);
    const spend = venue.userLamports - solToLamports(config.treasuryReserveSol);
    if (spend <= 0n || spend < solToLamports(config.treasuryMinBuySol)) {
      tally.skipped =
        `the treasury holds ${lamportsToSol(venue.userLamports)} SOL: a buyback needs its ${config.treasuryReserveSol} SOL reserve ` +
        `plus at least ${config.treasuryMinBuySol} SOL`;
      return false;
    }
    const quote = await venue.quote('buy', spend, config.treasurySlippageBps);
    const { decimals, tokenProgram } = venue.mint;
    tally.decimals = decimals;
    const details = {
      mint: mint.toBase58(),
      venue: quote.venue,
      route: quote.route,
      spent_sol: lamportsToSol(spend),
      quoted_tokens: rawToUi(quote.outRaw, decimals),
      min_tokens: rawToUi(quote.minOutRaw, decimals),
      decimals,
      cycle,
    };
    // The rent of accounts the buy opens for the treasury is not a price: it stays the treasury's.
    const ownAccounts = [getAssociatedTokenAddressSync(mint, owner, true, tokenProgram), userVolumeAccumulatorPda(owner), poolVolumeAccumulatorPda(owner)];
    await this.act(
      treasury,
      tally,
      'buyback',
      details,
      { kind: 'trade', venue, quote, options: { priorityLamports: BUY_PRIORITY_LAMPORTS } },
      { observe: { wallet: treasury.wallet, mint: mint.toBase58(), rentOf: ownAccounts.map((a) => a.toBase58()) }, lamports: spend, balance: venue.userLamports },
    );
    return true;
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}

/**
 * Lamports waiting for distribution per sharing coin, read in batches: its SharingConfig's pump creator vault above
 * rent, and its PumpSwap coin-creator vault (wSOL) once graduated.
 */
async function waitingFees(connection: Connection, mints: PublicKey[]): Promise<bigint[]> {
  const rent = BigInt(await connection.getMinimumBalanceForRentExemption(0, 'confirmed'));
  const addresses = mints.flatMap((mint) => {
    const config = feeSharingConfigPda(mint);
    return [creatorVaultPda(config), coinCreatorVaultAtaPda(coinCreatorVaultAuthorityPda(config), NATIVE_MINT, TOKEN_PROGRAM_ID)];
  });
  const infos: Array<AccountInfo<Buffer> | null> = [];
  for (let i = 0; i < addresses.length; i += ACCOUNTS_PER_CALL) infos.push(...(await connection.getMultipleAccountsInfo(addresses.slice(i, i + ACCOUNTS_PER_CALL), 'confirmed')));
  return mints.map((_, i) => {
    const [curve, pool] = [infos[2 * i], infos[2 * i + 1]];
    let waiting = curve && BigInt(curve.lamports) > rent ? BigInt(curve.lamports) - rent : 0n;
    if (pool && pool.data.length >= AccountLayout.span) waiting += AccountLayout.decode(pool.data.subarray(0, AccountLayout.span)).amount;
    return waiting;
  });
}
