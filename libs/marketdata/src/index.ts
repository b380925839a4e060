export { MarketDataStore } from './store';
export { MarketStore, MARKET_SCHEMA, marketView, type MarketView, type ReadingStamp } from './markets';
export { PortfolioStore, PORTFOLIO_SCHEMA, type PortfolioRow, type FoundTokenAccount, type RefreshSummary } from './portfolios';
export { TreasuryCycleStore, TREASURY_SCHEMA, type LastCycle } from './treasuryCycles';
export { AnchorRunnerStore, ANCHOR_SCHEMA, type AnchorDelay } from './anchorRunner';
