import { PublicKey, type Connection } from '@solana/web3.js';
import { rpcUnavailable, type ActionRequest } from '@svc/actions';
import {
  ChainError,
  FIRST_TRADE_RENT,
  SOL_MINT,
  isRpcUnreachable,
  lamportsToSol,
  mintInfo,
  parsePublicKey,
  rawToUi,
  readMarket,
  readMarketAwaitingPool,
  solToLamports,
  tokenBalanceRaw,
  uiToRaw,
  type MintInfo,
  type TradeQuote,
  type Venue,
} from '@svc/chain';
import type { RequestOf, buyBody, quoteQuery, sellBody, swapBody } from '@svc/contracts';
import { Rejected, type Citizen } from '@svc/domain';
import type { Services } from '../services';
import { actionReply, type ActionReply } from './transfer';

const SOL_DECIMALS = 9;
/** The most `amount_sol` a buy (and so a buy quote) takes, as the buy schema says. */
const MAX_BUY_SOL = 100_000;

export type BuyInput = RequestOf<typeof buyBody> & { idempotencyKey?: string };

export type SellInput = RequestOf<typeof sellBody> & { idempotencyKey?: string };

export type QuoteInput = RequestOf<typeof quoteQuery>;

/** A signature's network fee, which a day cap counts beside the priority fee. */
const SIGNATURE_FEE_LAMPORTS = 5_000n;

/** The network fees an action signed by the citizen alone may pay: what a spending policy's day cap counts. */
export function networkFees(priorityLamports: bigint): bigint {
  return SIGNATURE_FEE_LAMPORTS + priorityLamports;
}

/** The citizen at the ledger head, with its wallet as a key. */
export async function traderOf(services: Services, agentId: string): Promise<Citizen & { owner: PublicKey }> {
  const citizen = (await services.writer.read((state) => state.citizens.byId.get(agentId)))!;
  return { ...citizen, owner: new PublicKey(citizen.wallet) };
}

/** An RPC read before anything is sent: an unreachable chain is 503 with nothing done, a refusal stays itself. */
export async function beforeSending<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (!(error instanceof Rejected) && !(error instanceof ChainError) && isRpcUnreachable(error)) throw rpcUnavailable(error);
    throw error;
  }
}

/** `percent` or `amount` of what the wallet holds, in base units, as sell and burn take it. */
export async function amountToMove(
  connection: Connection,
  owner: PublicKey,
  mint: PublicKey,
  info: { programId: PublicKey; decimals: number },
  input: { percent?: number; amount?: number },
): Promise<{ raw: bigint; held: bigint; all: boolean }> {
  if (input.percent !== undefined && input.amount !== undefined) {
    throw new Rejected('invalid_request', 'send either `percent` or `amount`, not both', { field: 'percent' });
  }
  if (input.percent === undefined && input.amount === undefined) throw new Rejected('amount_required', 'send `percent` (0.01-100) or `amount` (whole tokens)');
  const held = await beforeSending(tokenBalanceRaw(connection, owner, mint, info.programId));
  if (held === 0n) throw new Rejected('no_balance', `the wallet holds none of ${mint.toBase58()}`, { mint: mint.toBase58() });
  const raw = input.percent !== undefined ? (held * BigInt(Math.round(input.percent * 100))) / 10_000n : uiToRaw(input.amount!, info.decimals);
  if (raw === 0n) throw new Rejected('invalid_request', `${input.percent}% of ${rawToUi(held, info.decimals)} is less than one base unit`, { field: 'percent' });
  if (raw > held) {
    throw new Rejected('insufficient', `the wallet holds ${rawToUi(held, info.decimals)} of ${mint.toBase58()}; this needs ${rawToUi(raw, info.decimals)}`, {
      needed: rawToUi(raw, info.decimals),
      available: rawToUi(held, info.decimals),
    });
  }
  return { raw, held, all: raw === held };
}

/**
 * Runs a citizen's trade on the pipeline: signed with the custody key when it executes, handed out otherwise,
 * recorded as `action` with `summary` as its public facts. What the client asked (less its key) finds the
 * outbox row again on a retry, since the summary holds a quote that may have moved.
 */
export async function runTrade(
  services: Services,
  trader: Citizen & { owner: PublicKey },
  action: 'buy' | 'sell' | 'burn' | 'swap',
  input: { execute: boolean; idempotencyKey?: string },
  summary: Record<string, unknown>,
  steps: Pick<ActionRequest, 'build' | 'funds' | 'spend'>,
): Promise<ActionReply> {
  const { agentId, wallet } = trader;
  const outcome = await services.pipeline.run({
    action,
    agentId,
    wallet,
    sign: input.execute && trader.custody === 'service',
    idempotencyKey: input.idempotencyKey,
    request: { ...input, idempotencyKey: undefined },
    record: { type: 'RecordAction', agentId, data: { action, wallet, details: summary } },
    summary,
    ...steps,
  });
  return actionReply(outcome);
}

/**
 * The venue that trades `mint` for `user`. A coin between its curve and its pool is held up to GRADUATION_WAIT_MS
 * for the pool and trades there, or is 503 graduating: the aggregator has no route for it.
 */
function marketFor(services: Services, mint: PublicKey, user: PublicKey = PublicKey.default): Promise<Venue> {
  const { connection, aggregator, pools } = services.chain;
  return beforeSending(readMarketAwaitingPool(connection, aggregator, pools, mint, user, services.config.graduationWaitMs));
}

function marketMint(venue: Venue): MintInfo {
  return { programId: venue.mint.tokenProgram, decimals: venue.mint.decimals, supply: venue.mint.supply };
}

/** POST /api/v1/tokens/buy: spends `amount_sol` on the venue that trades the mint, with a floor on the tokens enforced on-chain. */
export async function buy(services: Services, agentId: string, input: BuyInput): Promise<ActionReply> {
  const trader = await traderOf(services, agentId);
  const mint = parsePublicKey(input.mint, 'mint');
  const spend = solToLamports(input.amount_sol);
  const venue = await marketFor(services, mint, trader.owner);
  const quote = await beforeSending(venue.quote('buy', spend, input.slippage_bps));
  const summary = {
    mint: mint.toBase58(),
    venue: quote.venue,
    route: quote.route,
    spent_sol: lamportsToSol(spend),
    quoted_tokens: rawToUi(quote.outRaw, venue.mint.decimals),
    min_tokens: rawToUi(quote.minOutRaw, venue.mint.decimals),
  };
  const priorityLamports = solToLamports(input.priority_fee_sol);
  return runTrade(services, trader, 'buy', input, summary, {
    build: { kind: 'trade', venue, quote, options: { priorityLamports } },
    funds: { lamports: spend + venue.openingRent(), balance: venue.userLamports },
    spend: { lamports: spend, feeLamports: networkFees(priorityLamports), mint: mint.toBase58() },
  });
}

/** POST /api/v1/tokens/sell: `percent` or `amount` of the holding back to SOL, with a floor on the SOL enforced on-chain. */
export async function sell(services: Services, agentId: string, input: SellInput): Promise<ActionReply> {
  const trader = await traderOf(services, agentId);
  const mint = parsePublicKey(input.mint, 'mint');
  const venue = await marketFor(services, mint, trader.owner);
  const { raw, all } = await amountToMove(services.chain.connection, trader.owner, mint, marketMint(venue), input);
  const quote = await beforeSending(venue.quote('sell', raw, input.slippage_bps));
  const close = all && input.close_token_account !== false;
  const summary = {
    mint: mint.toBase58(),
    venue: quote.venue,
    route: quote.route,
    sold_tokens: rawToUi(raw, venue.mint.decimals),
    quoted_sol: lamportsToSol(quote.outRaw),
    min_sol: lamportsToSol(quote.minOutRaw),
    closed_token_account: close,
  };
  return runTrade(services, trader, 'sell', input, summary, {
    build: { kind: 'trade', venue, quote, options: { priorityLamports: solToLamports(input.priority_fee_sol), closeAccount: close } },
    funds: { lamports: 0n, balance: venue.userLamports },
  });
}

/** The reply of GET /api/v1/quote: a quote in whole units (SOL or tokens). */
export type QuoteReply = Pick<TradeQuote, 'venue' | 'route' | 'mint' | 'side'> & {
  in_amount: number;
  expected_out: number;
  min_out: number;
  slippage_bps: number;
  fees: { sol: number };
  price_impact_pct: number;
};

export function quoteReply(quote: TradeQuote, decimals: number): QuoteReply {
  const [inDecimals, outDecimals] = quote.side === 'buy' ? [SOL_DECIMALS, decimals] : [decimals, SOL_DECIMALS];
  return {
    venue: quote.venue,
    route: quote.route,
    mint: quote.mint,
    side: quote.side,
    in_amount: rawToUi(quote.inRaw, inDecimals),
    expected_out: rawToUi(quote.outRaw, outDecimals),
    min_out: rawToUi(quote.minOutRaw, outDecimals),
    slippage_bps: quote.slippageBps,
    fees: { sol: lamportsToSol(quote.feeLamports) },
    price_impact_pct: quote.priceImpactPct,
  };
}

/** GET /api/v1/quote: the trade's own venue detection and math, without sending anything. */
export async function quote(services: Services, input: QuoteInput): Promise<QuoteReply> {
  const mint = parsePublicKey(input.mint, 'mint');
  const venue = await marketFor(services, mint);
  // A buy is quoted for what POST /tokens/buy accepts; more SOL than that would not even be a safe lamport count.
  if (input.side === 'buy' && input.amount > MAX_BUY_SOL) throw new Rejected('invalid_request', `a buy spends at most ${MAX_BUY_SOL} SOL`, { field: 'amount' });
  const raw = input.side === 'buy' ? solToLamports(input.amount) : uiToRaw(input.amount, venue.mint.decimals);
  const priced = await beforeSending(venue.quote(input.side, raw, input.slippage_bps));
  return quoteReply(priced, venue.mint.decimals);
}

export type SwapInput = RequestOf<typeof swapBody> & { idempotencyKey?: string };

async function decimalsOf(connection: Connection, mint: PublicKey): Promise<MintInfo | undefined> {
  return mint.equals(SOL_MINT) ? undefined : beforeSending(mintInfo(connection, mint));
}

/** What `raw` of `mint` is worth in SOL, by the aggregator's quote: the swap input a day cap counts. */
async function solValueOf(services: Services, mint: PublicKey, raw: bigint, info: MintInfo | undefined): Promise<bigint> {
  if (!info) return raw;
  const quoted = await beforeSending(services.chain.aggregator.quote(mint, SOL_MINT, raw, 0));
  return BigInt(quoted.outAmount);
}

/** POST /api/v1/swap: any mint to any mint through the aggregator, coin to coin routed through SOL when it must. */
export async function swap(services: Services, agentId: string, input: SwapInput): Promise<ActionReply> {
  const trader = await traderOf(services, agentId);
  const inputMint = parsePublicKey(input.input_mint, 'input_mint');
  const outputMint = parsePublicKey(input.output_mint, 'output_mint');
  if (inputMint.equals(outputMint)) throw new Rejected('invalid_request', 'input_mint and output_mint are the same', { field: 'output_mint' });
  const connection = services.chain.connection;
  const [inInfo, outInfo] = await Promise.all([decimalsOf(connection, inputMint), decimalsOf(connection, outputMint)]);
  const raw = uiToRaw(input.amount, inInfo?.decimals ?? SOL_DECIMALS);
  if (inInfo) await amountToMove(connection, trader.owner, inputMint, inInfo, { amount: input.amount });
  const quoted = await beforeSending(services.chain.aggregator.quote(inputMint, outputMint, raw, input.slippage_bps)).catch(async (error: unknown) => {
    // No route anywhere for a coin between its curve and its pool: say so (503 graduating), as buy and sell do.
    if (!(error instanceof ChainError && error.code === 'invalid_request')) throw error;
    for (const mint of [inputMint, outputMint].filter((m) => !m.equals(SOL_MINT))) {
      await readMarket(connection, services.chain.aggregator, mint).catch((read: unknown) => {
        if (read instanceof ChainError && read.code === 'graduating') throw read;
      });
    }
    throw error;
  });
  const outDecimals = outInfo?.decimals ?? SOL_DECIMALS;
  const summary = {
    venue: 'jupiter',
    route: `aggregator: ${quoted.routePlan.map((step) => step.swapInfo.label ?? step.swapInfo.ammKey).join(' → ')}`,
    input_mint: inputMint.toBase58(),
    output_mint: outputMint.toBase58(),
    in_amount: rawToUi(raw, inInfo?.decimals ?? SOL_DECIMALS),
    quoted_out: rawToUi(BigInt(quoted.outAmount), outDecimals),
    min_out: rawToUi(BigInt(quoted.otherAmountThreshold), outDecimals),
    price_impact_pct: Number(quoted.priceImpactPct) * 100,
  };
  const priorityLamports = solToLamports(input.priority_fee_sol);
  const intoSol = outputMint.equals(SOL_MINT);
  return runTrade(services, trader, 'swap', input, summary, {
    build: { kind: 'swap', quote: quoted, priorityLamports },
    funds: { lamports: (inInfo ? 0n : raw) + FIRST_TRADE_RENT },
    spend: {
      lamports: intoSol ? BigInt(quoted.outAmount) : await solValueOf(services, inputMint, raw, inInfo),
      feeLamports: networkFees(priorityLamports),
      // Back into SOL buys no coin: allowed_mints never keeps a citizen from leaving a position.
      ...(intoSol ? {} : { mint: outputMint.toBase58() }),
    },
  });
}
