import { ACCOUNT_SIZE } from '@solana/spl-token';
import { PublicKey, type TransactionInstruction } from '@solana/web3.js';
import type { ActionOutcome } from '@svc/actions';
import {
  collectOwnInstructions,
  distributeInstructions,
  lamportsToSol,
  minimumDistributable,
  packInstructionGroups,
  readCreatorFees,
  solToLamports,
  sweepDigest,
  type CoinFees,
  type CreatorFees,
} from '@svc/chain';
import type { RequestOf, claimBody } from '@svc/contracts';
import { Rejected, type Citizen } from '@svc/domain';
import { tokens } from '@svc/projections';
import type { OutboxRow } from '@svc/vault';
import type { Services } from '../services';
import { runHeldAction, type HeldRequest } from './heldAction';
import { beforeSending, traderOf } from './trade';
import { actionReply, type ActionReply, type HandedOut, type Sent } from './transfer';

/** The spec's limit: buckets swept per claim. */
export const CLAIM_COINS = 6;
/** Coins a fee reading covers, newest first: four accounts each, read 100 keys a call. */
export const FEE_COINS = 1_000;
const BPS = 10_000n;

type Trader = Citizen & { owner: PublicKey };

/** The citizen's coins and every vault that holds their creator fees, read in one batched pass. */
async function readFees(services: Services, trader: Trader): Promise<{ fees: CreatorFees; symbols: Map<string, string | null> }> {
  const { db, schema } = services.readModel;
  const coins = await tokens.creatorCoins(db, schema, trader.agentId, trader.wallet, FEE_COINS);
  const fees = await beforeSending(readCreatorFees(services.chain.connection, trader.owner, coins.map((c) => new PublicKey(c.mint))));
  return { fees, symbols: new Map(coins.map((c) => [c.mint, c.symbol])) };
}

/** A coin's creator fees as GET /api/v1/fees shows them; the figures are null for a coin that pays the wallet's own vaults. */
type CoinFeesView = {
  mint: string;
  symbol: string | null;
  sharing: boolean;
  paid_to: CoinFees['paidTo'];
  graduated: boolean;
  share_bps: number | null;
  curve_vault_sol: number | null;
  pool_vault_sol: number | null;
  pending_sol: number | null;
  claimable_sol: number | null;
};

export type FeesReply = {
  wallet: string;
  total_sol: number;
  coins: CoinFeesView[];
  creator_vault: { curve_vault_sol: number; pool_vault_sol: number; claimable_sol: number };
  slot: number;
};

function coinView(coin: CoinFees, symbol: string | null): CoinFeesView {
  const sharing = coin.paidTo === 'sharing';
  return {
    mint: coin.mint.toBase58(),
    symbol,
    sharing,
    paid_to: coin.paidTo,
    graduated: coin.graduated,
    share_bps: sharing ? coin.shareBps : null,
    curve_vault_sol: sharing ? lamportsToSol(coin.curveVault) : null,
    pool_vault_sol: sharing ? lamportsToSol(coin.poolVault) : null,
    pending_sol: sharing ? lamportsToSol(coin.pending) : null,
    claimable_sol: sharing ? lamportsToSol(coin.claimable) : null,
  };
}

/** GET /api/v1/fees: what each coin the citizen created has waiting for it, from one batched read of every vault. */
export async function feesOf(services: Services, agentId: string): Promise<FeesReply> {
  const trader = await traderOf(services, agentId);
  const { fees, symbols } = await readFees(services, trader);
  const coins = [...fees.coins].sort((a, b) => (b.claimable > a.claimable ? 1 : b.claimable < a.claimable ? -1 : 0));
  const total = fees.coins.reduce((sum, c) => sum + c.claimable, 0n) + fees.own.claimable;
  return {
    wallet: trader.wallet,
    total_sol: lamportsToSol(total),
    coins: coins.map((c) => coinView(c, symbols.get(c.mint.toBase58()) ?? null)),
    creator_vault: { curve_vault_sol: lamportsToSol(fees.own.curveVault), pool_vault_sol: lamportsToSol(fees.own.poolVault), claimable_sol: lamportsToSol(fees.own.claimable) },
    slot: fees.slot,
  };
}

/** One thing a claim sweeps: a sharing coin's distribution, or the wallet's own vaults. */
interface Bucket {
  source: 'sharing' | 'creator';
  mint: PublicKey | null;
  symbol: string | null;
  /** Lamports expected in the citizen's wallet. */
  claimable: bigint;
  /** Lamports paid out in all. */
  distributed: bigint;
  curveVault: bigint;
  poolVault: bigint;
  shareBps: number;
  /** Every recipient's share: the sharing config's shareholders, or the wallet alone. */
  shareholders: Array<{ address: string; shareBps: number }>;
  /** creator: the coins deployed here that pay into the wallet's vaults. */
  coins?: string[];
}

const largestFirst = (a: Bucket, b: Bucket) => (b.claimable > a.claimable ? 1 : b.claimable < a.claimable ? -1 : 0);

function bucketsOf(fees: CreatorFees, symbols: Map<string, string | null>): Bucket[] {
  const buckets: Bucket[] = fees.coins
    .filter((c) => c.paidTo === 'sharing' && c.claimable > 0n)
    .map((c) => ({
      source: 'sharing',
      mint: c.mint,
      symbol: symbols.get(c.mint.toBase58()) ?? null,
      claimable: c.claimable,
      distributed: c.pending,
      curveVault: c.curveVault,
      poolVault: c.poolVault,
      shareBps: c.shareBps,
      shareholders: c.config!.shareholders.map((h) => ({ address: h.address.toBase58(), shareBps: h.shareBps })),
    }));
  if (fees.own.claimable > 0n) {
    buckets.push({
      source: 'creator',
      mint: null,
      symbol: null,
      claimable: fees.own.claimable,
      distributed: fees.own.claimable,
      curveVault: fees.own.curveVault,
      poolVault: fees.own.poolVault,
      shareBps: 10_000,
      shareholders: [{ address: fees.wallet.toBase58(), shareBps: 10_000 }],
      coins: fees.coins.filter((c) => c.paidTo === 'creator').map((c) => c.mint.toBase58()),
    });
  }
  return buckets.sort(largestFirst);
}

/** A bucket left for a later claim, and why when it was looked at. */
type WaitingView = { mint: string | null; symbol: string | null; claimable_sol: number; reason?: string; minimum_sol?: number };

const waitingView = (b: Bucket, why: Pick<WaitingView, 'reason' | 'minimum_sol'> = {}): WaitingView => ({ mint: b.mint?.toBase58() ?? null, symbol: b.symbol, claimable_sol: lamportsToSol(b.claimable), ...why });

/**
 * The largest buckets, up to CLAIM_COINS, that can be swept now: a sharing coin must reach pump's minimum
 * distributable fee (asked through the SDK, which also says what a distribution pays); below it, it waits.
 */
async function chooseBuckets(services: Services, trader: Trader, buckets: Bucket[]): Promise<{ chosen: Bucket[]; skipped: WaitingView[]; remaining: Bucket[] }> {
  const chosen: Bucket[] = [];
  const skipped: WaitingView[] = [];
  let next = 0;
  while (chosen.length < CLAIM_COINS && next < buckets.length) {
    const round = buckets.slice(next, next + CLAIM_COINS - chosen.length);
    next += round.length;
    const checks = await beforeSending(
      Promise.all(round.map((b) => (b.source === 'sharing' ? minimumDistributable(services.chain.connection, b.mint!, trader.owner) : Promise.resolve(null)))),
    );
    round.forEach((bucket, i) => {
      const check = checks[i];
      // Unchecked (the wallet's own vaults, or a simulation that failed): the transaction itself will say.
      if (!check || !check.answered) return chosen.push(bucket);
      if (!check.canDistribute) {
        return skipped.push(waitingView(bucket, { reason: 'below pump’s minimum distributable fee', minimum_sol: lamportsToSol(check.minimumRequired) }));
      }
      const distributed = check.distributableFees;
      chosen.push({ ...bucket, distributed, claimable: (distributed * BigInt(bucket.shareBps)) / BPS });
    });
  }
  return { chosen: chosen.sort(largestFirst), skipped, remaining: buckets.slice(next) };
}

/** A bucket a claim swept, and what each of its shareholders was paid. */
type SweptView = {
  mint: string | null;
  symbol: string | null;
  source: Bucket['source'];
  coins?: string[];
  sol: number;
  distributed_sol: number;
  curve_vault_sol: number;
  pool_vault_sol: number;
  paid: Array<{ address: string; share_bps: number; sol: number }>;
  transaction_index: number;
};

/** What a `fee_claim` action sums its transaction up in. */
type ClaimSummary = { sol: number; coins: SweptView[] };

function sweptView(b: Bucket, transaction: number): SweptView {
  return {
    mint: b.mint?.toBase58() ?? null,
    symbol: b.symbol,
    source: b.source,
    ...(b.coins ? { coins: b.coins } : {}),
    sol: lamportsToSol(b.claimable),
    distributed_sol: lamportsToSol(b.distributed),
    curve_vault_sol: lamportsToSol(b.curveVault),
    pool_vault_sol: lamportsToSol(b.poolVault),
    paid: b.shareholders.map((h) => ({ address: h.address, share_bps: h.shareBps, sol: lamportsToSol((b.distributed * BigInt(h.shareBps)) / BPS) })),
    transaction_index: transaction,
  };
}

interface Planned extends Bucket {
  instructions: TransactionInstruction[];
}

/** Whether anything of these buckets is still waiting: another claim may have swept them since the first look. */
async function stillWaiting(services: Services, trader: Trader, part: Planned[]): Promise<boolean> {
  const mints = part.filter((b) => b.mint).map((b) => b.mint!);
  const now = await readCreatorFees(services.chain.connection, trader.owner, mints);
  return now.coins.some((c) => c.pending > 0n) || (part.some((b) => b.source === 'creator') && now.own.claimable > 0n);
}

function heldBy(holder: OutboxRow): Rejected {
  if (holder.state === 'unsigned') {
    return new Rejected(
      'action_in_progress',
      `a fee claim of the same fees was handed out unsigned and can land until block height ${holder.lastValidBlockHeight}: sign and send it ` +
        '(POST /api/v1/tx/submit), or claim again once it has expired',
      { reference: holder.reference, last_valid_block_height: holder.lastValidBlockHeight },
    );
  }
  return new Rejected('action_in_progress', 'a fee claim of the same fees is being sent; ask again in a moment', holder.signature ? { signature: holder.signature } : {});
}

/**
 * One transaction of a claim as the `fee_claim` action. Its hold names the citizen and what it sweeps (each
 * bucket and the amounts seen), so two requests that saw the same fees never both send; a later claim of new
 * fees holds a new key. A hold whose claim landed is met only when the very same amounts are waiting again:
 * the next key then follows on from that claim's signature.
 */
async function runClaim(
  services: Services,
  trader: Trader,
  part: Planned[],
  index: number,
  options: { sign: boolean; execute: boolean; idempotencyKey?: string },
  holdKey: string,
): Promise<ActionOutcome> {
  const { agentId, wallet } = trader;
  const details: ClaimSummary = {
    sol: lamportsToSol(part.reduce((sum, b) => sum + b.claimable, 0n)),
    coins: part.map((b) => sweptView(b, index)),
  };
  // The wSOL account PumpSwap pays into is opened and closed in the same transaction, but its rent must be there meanwhile.
  const opensWsolAccount = part.some((b) => b.source === 'creator' && b.poolVault > 0n);
  const request: HeldRequest = {
    action: 'fee_claim',
    agentId,
    wallet,
    sign: options.sign,
    idempotencyKey: options.idempotencyKey,
    request: { execute: options.execute, part: index },
    holdKey,
    record: { type: 'RecordAction', agentId, data: { action: 'fee_claim', wallet, details } },
    summary: details,
    build: { kind: 'instructions', transaction: { instructions: part.flatMap((b) => b.instructions) } },
    funds: { lamports: 0n, opens: opensWsolAccount ? [{ bytes: ACCOUNT_SIZE }] : [] },
  };
  return runHeldAction(services, request, {
    async recheck() {
      if (!(await stillWaiting(services, trader, part))) throw new Rejected('no_balance', 'these creator fees were swept just now by another claim; nothing is left to claim');
    },
    whenHeld(holder: OutboxRow): Promise<ActionOutcome> | ActionOutcome {
      if (holder.state === 'unsigned' && !options.sign) return services.pipeline.handoutOf(holder, wallet);
      if ((holder.state === 'done' || holder.state === 'rejected') && holder.signature) {
        return runClaim(services, trader, part, index, options, `${holdKey}:${holder.signature.slice(0, 16)}`);
      }
      throw heldBy(holder);
    },
  });
}

export type ClaimInput = RequestOf<typeof claimBody> & { idempotencyKey?: string };

/** How a transaction went out, less `executed`: sent, or handed out unsigned. */
type WentOut = Partial<Omit<Sent, 'executed'> & Omit<HandedOut, 'executed'>>;

/** One transaction of a claim: how it went out, or the refusal that stopped the claim there. */
type ClaimTransaction = WentOut & { executed: boolean; mints: Array<string | null>; sol: number; error?: { code: string; message: string } };

/** A claim: how its first transaction went out, what it swept, each transaction, and what waits for another claim. */
export type ClaimReply = WentOut & {
  executed: boolean;
  claimed_sol: number;
  swept: SweptView[];
  transactions: ClaimTransaction[];
  remaining: WaitingView[];
  skipped: WaitingView[];
};

/**
 * POST /api/v1/fees/claim: sweeps the largest waiting buckets, up to 6: each sharing coin's distribution
 * (distribute_creator_fees, its pool's fees moved to pump first once graduated; the citizen's share lands in
 * its wallet, the other shareholders' in theirs) and the wallet's own vaults (collect_creator_fee and
 * collect_coin_creator_fee, as SOL). As few transactions as fit 1,232 bytes each, each one `fee_claim` action
 * that the citizen pays the fee of.
 */
export async function claimFees(services: Services, agentId: string, input: ClaimInput): Promise<ClaimReply> {
  const trader = await traderOf(services, agentId);
  const { fees, symbols } = await readFees(services, trader);
  const buckets = bucketsOf(fees, symbols);
  if (buckets.length === 0) throw new Rejected('no_balance', 'no creator fees are waiting in the vaults of your coins; GET /api/v1/fees shows them');
  const { chosen, skipped, remaining } = await chooseBuckets(services, trader, buckets);
  if (chosen.length === 0) {
    throw new Rejected('no_balance', 'every sharing coin with fees waiting is below pump’s minimum distributable fee; they will be claimable once more fees accrue', { skipped });
  }
  const connection = services.chain.connection;
  const planned: Planned[] = await beforeSending(
    Promise.all(
      chosen.map(async (b) => ({
        ...b,
        instructions: b.source === 'sharing' ? await distributeInstructions(connection, b.mint!) : await collectOwnInstructions(connection, trader.owner, fees.own),
      })),
    ),
  );
  const parts = packInstructionGroups(trader.owner, planned);
  const sign = input.execute && trader.custody === 'service';
  const transactions: ClaimTransaction[] = [];
  const swept: SweptView[] = [];
  const unswept: WaitingView[] = [];
  let first: WentOut | undefined;
  let claimed = 0n;
  for (const [index, part] of parts.entries()) {
    const holdKey = `fee_claim:${agentId}:${sweepDigest(part.flatMap((b) => [b.mint?.toBase58() ?? 'creator', b.curveVault, b.poolVault]))}`;
    let outcome: ActionOutcome;
    try {
      outcome = await runClaim(services, trader, part, index, { sign, execute: input.execute, idempotencyKey: input.idempotencyKey }, holdKey);
    } catch (error) {
      // The first transaction's refusal is the claim's; a later one's leaves what landed standing.
      if (index === 0 || !(error instanceof Rejected)) throw error;
      const failed = { code: error.code, message: error.message };
      for (const rest of parts.slice(index)) unswept.push(...rest.map((b) => waitingView(b, { reason: `not swept: ${failed.code}` })));
      transactions.push({ executed: false, mints: part.map((b) => b.mint?.toBase58() ?? null), sol: 0, error: failed });
      break;
    }
    // The row's own facts: a handout asked for again answers what it was handed out with.
    const { coins, sol, executed, ...wentOut } = actionReply(outcome) as ActionReply & ClaimSummary;
    first ??= wentOut;
    transactions.push({ executed, ...wentOut, mints: coins.map((c) => c.mint), sol });
    swept.push(...coins.map((c) => ({ ...c, transaction_index: index })));
    claimed += solToLamports(sol);
  }
  const executed = transactions.every((t) => t.executed === true || t.error !== undefined);
  return {
    executed,
    ...first,
    claimed_sol: lamportsToSol(claimed),
    swept,
    transactions,
    remaining: [...unswept, ...remaining.map((b) => waitingView(b))],
    skipped,
  };
}
