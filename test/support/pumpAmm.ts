import type { SwapSolanaState } from '@pump-fun/pump-swap-sdk';

/** The swap SDK's pricing inputs (buyQuoteInput, sellBaseInput, ...), all read from the state `swapSolanaState` fetched. */
export const swapPricing = (s: SwapSolanaState) => ({
  slippage: 0,
  baseReserve: s.poolBaseAmount,
  quoteReserve: s.poolQuoteAmount,
  virtualQuoteReserves: s.pool.virtualQuoteReserves,
  globalConfig: s.globalConfig,
  baseMintAccount: s.baseMintAccount,
  baseMint: s.baseMint,
  coinCreator: s.pool.coinCreator,
  creator: s.pool.creator,
  feeConfig: s.feeConfig,
  quoteMint: s.pool.quoteMint,
  isMayhemMode: s.pool.isMayhemMode,
  creatorFeeBps: s.pool.creatorFeeBps,
});
