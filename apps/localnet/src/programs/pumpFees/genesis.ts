import { GenesisContext } from '../../runtime/program';
import { FeeTier, Fees } from '../pumpSwap/math';
import { MAINNET_ADMIN } from '../pumpSwap/genesis';
import { PUMP_AMM_PROGRAM_ID } from '../pumpSwap/state';
import { FeeConfig, PUMP_FEES_PROGRAM_ID, encodeFeeConfig, feeConfigPda } from './state';

const fees = (lp: number, protocol: number, creator: number): Fees => ({ lpFeeBps: BigInt(lp), protocolFeeBps: BigInt(protocol), creatorFeeBps: BigInt(creator) });

/** [market cap threshold in quote base units, lp, protocol, creator] rows of mainnet's PumpSwap FeeConfig. */
type TierRow = readonly [bigint, number, number, number];
const tiers = (rows: readonly TierRow[]): FeeTier[] => rows.map(([threshold, lp, protocol, creator]) => ({ marketCapLamportsThreshold: threshold, fees: fees(lp, protocol, creator) }));

const SOL_TIERS: readonly TierRow[] = [
  [0n, 2, 93, 30], [420_000_000_000n, 20, 5, 95], [1_470_000_000_000n, 20, 5, 90], [2_460_000_000_000n, 20, 5, 85],
  [3_440_000_000_000n, 20, 5, 80], [4_420_000_000_000n, 20, 5, 75], [9_820_000_000_000n, 20, 5, 70], [14_740_000_000_000n, 20, 5, 65],
  [19_650_000_000_000n, 20, 5, 60], [24_560_000_000_000n, 20, 5, 55], [29_470_000_000_000n, 20, 5, 50], [34_380_000_000_000n, 20, 5, 45],
  [39_300_000_000_000n, 20, 5, 40], [44_210_000_000_000n, 20, 5, 35], [49_120_000_000_000n, 20, 5, 30], [54_030_000_000_000n, 20, 5, 28],
  [58_940_000_000_000n, 20, 5, 25], [63_860_000_000_000n, 20, 5, 23], [68_770_000_000_000n, 20, 5, 20], [73_681_000_000_000n, 20, 5, 18],
  [78_590_000_000_000n, 20, 5, 15], [83_500_000_000_000n, 20, 5, 13], [88_400_000_000_000n, 20, 5, 10], [93_330_000_000_000n, 20, 5, 8],
  [98_240_000_000_000n, 20, 5, 5],
];

const STABLE_TIERS: readonly TierRow[] = [
  [0n, 2, 93, 30], [59_000_000_000n, 20, 5, 95], [300_000_000_000n, 20, 5, 90], [500_000_000_000n, 20, 5, 85],
  [700_000_000_000n, 20, 5, 80], [900_000_000_000n, 20, 5, 75], [2_000_000_000_000n, 20, 5, 70], [3_000_000_000_000n, 20, 5, 65],
  [4_000_000_000_000n, 20, 5, 60], [5_000_000_000_000n, 20, 5, 55], [6_000_000_000_000n, 20, 5, 50], [7_000_000_000_000n, 20, 5, 45],
  [8_000_000_000_000n, 20, 5, 40], [9_000_000_000_000n, 20, 5, 35], [10_000_000_000_000n, 20, 5, 30], [11_000_000_000_000n, 20, 5, 28],
  [12_000_000_000_000n, 20, 5, 25], [13_000_000_000_000n, 20, 5, 23], [14_000_000_000_000n, 20, 5, 20], [15_000_000_000_000n, 20, 5, 18],
  [16_000_000_000_000n, 20, 5, 15], [17_000_000_000_000n, 20, 5, 13], [18_000_000_000_000n, 20, 5, 10], [19_000_000_000_000n, 20, 5, 8],
  [20_000_000_000_000n, 20, 5, 5],
];

const [ammFeeConfig, ammFeeConfigBump] = feeConfigPda(PUMP_AMM_PROGRAM_ID);
export const AMM_FEE_CONFIG_ADDRESS = ammFeeConfig;

/** The PumpSwap fee schedule as on mainnet: market-cap tiers for pump pools, 25/5/0 bps flat for any other pool. */
export const GENESIS_AMM_FEE_CONFIG: FeeConfig = {
  bump: ammFeeConfigBump,
  admin: MAINNET_ADMIN,
  flatFees: fees(25, 5, 0),
  feeTiers: tiers(SOL_TIERS),
  stableFeeTiers: tiers(STABLE_TIERS),
  exoticFlatFees: fees(0, 0, 0),
};

export function pumpFeesGenesis(init: GenesisContext): void {
  const data = encodeFeeConfig(GENESIS_AMM_FEE_CONFIG);
  init.setAccount(ammFeeConfig, { lamports: init.rentExempt(data.length), data, owner: PUMP_FEES_PROGRAM_ID, executable: false });
}
