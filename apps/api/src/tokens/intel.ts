import { WRAPPED_SOL_MINT, explorerUrl } from '@svc/chain';
import type { MarketView } from '@svc/marketdata';
import type { FeeShareView, PostView, TokenView } from '@svc/projections';

/** What is known about a coin: the ledger's side (when deployed here) and the chain's (when it could be read). */
export interface CoinFacts {
  mint: string;
  token?: TokenView;
  market?: MarketView | null;
  /** A sharing record of a coin deployed elsewhere. */
  feeShare?: FeeShareView;
  /** The aggregator's USD price, for a mint no pump venue prices. */
  aggregatorUsd?: number | null;
  solUsd: number | null;
  /** The Solana RPC, for explorer links to the right cluster. */
  rpcUrl: string;
  posts?: PostView[];
}

function explorerAddress(address: string, rpcUrl: string): string {
  return explorerUrl(address, rpcUrl).replace(`/tx/${address}`, `/address/${address}`);
}

function reservesOf(market: MarketView | null | undefined): Record<string, unknown> | null {
  if (!market) return null;
  if (market.venue === 'pump-amm' && market.pool) {
    return { source: 'pool', base_reserve: market.pool.base_reserve, quote_reserve: market.pool.quote_reserve, virtual_quote_reserve: market.pool.virtual_quote_reserve };
  }
  if (market.curve) return { source: 'bonding_curve', ...market.curve };
  return null;
}

/** Where the coin is listed beyond this service, and which of them the service trades it on now. */
function marketsOf(mint: string, market: MarketView | null | undefined, pumpCoin: boolean): Array<Record<string, unknown>> {
  const venue = market?.venue;
  const listings: Array<Record<string, unknown>> = [];
  // A graduating coin is pump's, yet its curve takes no more trades: they wait for the pool.
  const onCurve = venue === 'pump' && market?.status !== 'graduating';
  if (pumpCoin) listings.push({ name: 'pump.fun', url: `https://pump.fun/coin/${mint}`, venue: 'pump', active: onCurve });
  if (market?.pool) {
    listings.push({ name: 'PumpSwap', url: `https://swap.pump.fun/?input=${WRAPPED_SOL_MINT}&output=${mint}`, venue: 'pump-amm', active: venue === 'pump-amm', pool: market.pool.address });
  }
  listings.push({ name: 'DEX Screener', url: `https://dexscreener.com/solana/${mint}` });
  listings.push({ name: 'Jupiter', url: `https://jup.ag/swap/SOL-${mint}`, venue: 'jupiter', active: venue === 'jupiter' });
  return listings;
}

const times = (a: number | null, b: number | null) => (a === null || b === null ? null : a * b);

/**
 * A coin as GET /tokens/{mint} (with its posts) and GET /tokens (without) present it: the deploy as the
 * ledger recorded it, and price, market cap, progress and reserves as the chain holds them.
 */
export function coinView(facts: CoinFacts): Record<string, unknown> {
  const { mint, token, market, solUsd, rpcUrl } = facts;
  const pumpCoin = token !== undefined || Boolean(market?.bonding_curve);
  let priceSol = market?.price_sol ?? null;
  let priceUsd = times(priceSol, solUsd);
  if (priceSol === null && facts.aggregatorUsd != null) {
    priceUsd = facts.aggregatorUsd;
    priceSol = solUsd ? priceUsd / solUsd : null;
  }
  const supply = market?.supply ?? null;
  const marketCapSol = market?.market_cap_sol ?? times(priceSol, supply);
  const links: Record<string, string> = {
    ...(token?.links ?? {}),
    ...(pumpCoin ? { pump: `https://pump.fun/coin/${mint}` } : {}),
    explorer: explorerAddress(mint, rpcUrl),
    dexscreener: `https://dexscreener.com/solana/${mint}`,
    jupiter: `https://jup.ag/swap/SOL-${mint}`,
  };
  const feeShare = token?.fee_share ?? facts.feeShare ?? null;
  return {
    mint,
    name: token?.name ?? null,
    symbol: token?.symbol ?? null,
    description: token?.description ?? null,
    image: token?.image ?? null,
    metadata_uri: token?.metadata_uri ?? null,
    launched_here: token !== undefined,
    // Without a reading, a coin launched here is taken to be where it started.
    venue: market?.venue ?? (token ? 'pump' : 'jupiter'),
    price_sol: priceSol,
    price_usd: priceUsd,
    market_cap_sol: marketCapSol,
    market_cap_usd: times(marketCapSol, solUsd),
    progress: market?.progress ?? null,
    complete: market ? market.complete : null,
    status: market?.status ?? null,
    supply,
    decimals: market?.decimals ?? null,
    bonding_curve: token?.bonding_curve ?? market?.bonding_curve ?? null,
    creator: token?.creator ?? market?.creator ?? null,
    reserves: reservesOf(market),
    pool: market?.pool ? { address: market.pool.address, base_reserve: market.pool.base_reserve, quote_reserve: market.pool.quote_reserve, virtual_quote_reserve: market.pool.virtual_quote_reserve } : null,
    markets: marketsOf(mint, market, pumpCoin),
    links,
    deployed_by: token ? token.deployed_by : null,
    deployed_at: token?.deployed_at ?? null,
    seq: token?.seq ?? null,
    signature: token?.signature ?? null,
    fee_share: feeShare,
    mayhem: token?.mayhem ?? market?.mayhem ?? null,
    holder_reward: token?.holder_reward ?? null,
    dev_buy: token?.dev_buy ?? null,
    trades: token?.trades ?? null,
    market_updated_at: market?.updated_at ?? null,
    market_slot: market?.updated_slot ?? null,
    ...(facts.posts ? { society_posts: facts.posts } : {}),
    ...(token?.untrusted ? { untrusted: token.untrusted } : {}),
  };
}
