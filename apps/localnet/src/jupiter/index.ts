export { jupiterRoutes } from './routes';
export type { JupiterOptions } from './routes';
export { LOCAL_USD_DECIMALS, LOCAL_USD_MINT, LOCAL_USD_TREASURY, stablecoinSeed } from './stablecoin';
export type { StablecoinSeedOptions } from './stablecoin';
