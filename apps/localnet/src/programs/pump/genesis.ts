import { createHash } from 'node:crypto';
import { PublicKey, SystemProgram } from '@solana/web3.js';
import type { GenesisContext } from '../../runtime/program';
import { FEE_CONFIG, FEE_CONFIG_BUMP, GLOBAL, GLOBAL_VOLUME_ACCUMULATOR, PUMP_FEES_PROGRAM_ID, PUMP_PROGRAM_ID, PUMP_TOKEN_MINT } from './addresses';
import { encodeFeeConfig, encodeGlobal, encodeGlobalVolumeAccumulator, FeeConfig, FeeTier, Global, GlobalVolumeAccumulator } from './state';

/**
 * The pump state a fresh localnet starts with: mainnet's parameters and, where the SDK hardcodes mainnet
 * addresses (the eight fee recipients, the eight buyback recipients), mainnet's addresses, so that whatever
 * recipient the SDK picks at random is one the program accepts.
 */

const key = (address: string): PublicKey => new PublicKey(address);

/** Mainnet's Global authority; it only gates admin instructions, which the localnet does not emulate. */
export const PUMP_AUTHORITY = key('FFWtrEQ4B4PKQoVuHYzZq8FabGkVatYzDpEVHsK5rrhF');
export const WITHDRAW_AUTHORITY = key('39azUYFWPz3VHgKCf3VChUwbpURdCHRxjWVowf5jUJjg');

/** Global.fee_recipient followed by Global.fee_recipients: mainnet's, as the SDK's getFeeRecipient lists them. */
export const FEE_RECIPIENTS = [
  '62qc2CNXwrYqQScmEdiZFFAnJR262PxWEuNQtxfafNgV',
  '7VtfL8fvgNfhz17qKRMjzQEXgbdpnHHHQRh54R9jP2RJ',
  '7hTckgnGnLQR6sdH7YkqFTAA7VwTfYFaZ6EhEsU3saCX',
  '9rPYyANsfQZw3DnDmKE3YCQF5E8oD89UXoHn9JFEhJUz',
  'AVmoTthdrX6tKt4nDjco2D775W2YK3sDhxPcMmzUAmTY',
  'CebN5WGQ4jvEPvsVU4EoHEpgzq1VV7AbicfhtW4xC9iM',
  'FWsW1xNtWscwNmKv6wVsU1iTzRN6wmmk3MjxRP5tT7hz',
  'G5UZAVbAf46s7cKWoyKu8kYTip9DGTpbLZ2qa9Aq69dP',
].map(key);

/** The mayhem-mode recipients (Global.reserved_fee_recipient + reserved_fee_recipients): sha256("pump localnet reserved fee recipient <i>"). */
export const RESERVED_FEE_RECIPIENTS = Array.from({ length: 8 }, (_, i) =>
  new PublicKey(createHash('sha256').update(`pump localnet reserved fee recipient ${i}`).digest()),
);

/** Global.buyback_fee_recipients: the list the SDK draws `buybackFeeRecipient` from. */
export const BUYBACK_FEE_RECIPIENTS = [
  '5YxQFdt3Tr9zJLvkFccqXVUwhdTWJQc1fFg2YPbxvxeD',
  '9M4giFFMxmFGXtc3feFzRai56WbBqehoSeRE5GK7gf7',
  'GXPFM2caqTtQYC2cJ5yJRi9VDkpsYZXzYdwYpGnLmtDL',
  '3BpXnfJaUTiwXnJNe7Ej1rcbzqTTQUvLShZaWazebsVR',
  '5cjcW9wExnJJiqgLjq7DEG75Pm6JBgE1hNv4B2vHXUW6',
  'EHAAiTxcdDwQ3U4bU6YcMsQGaekdzLS3B5SmYo46kJtL',
  '5eHhjP8JaYkz83CWwvGU2uMUXefd3AazWGx4gpcuEEYD',
  'A7hAgCzFw14fejgCp387JUJRMNyz4j89JKnhtKU8piqW',
].map(key);

/**
 * The signer `OnlinePumpSdk.getMinimumDistributableFee` simulates with unless told otherwise: a funded mainnet
 * account nobody here holds the key of, funded here too so that the SDK's default works.
 */
export const SDK_SIMULATION_SIGNER = key('UqN2p5bAzBqYdHXcgB6WLtuVrdvmy9JSAtgqZb3CMKw');

export const GENESIS_GLOBAL: Global = {
  initialized: true,
  authority: PUMP_AUTHORITY,
  feeRecipient: FEE_RECIPIENTS[0],
  initialVirtualTokenReserves: 1_073_000_000_000_000n,
  initialVirtualSolReserves: 30_000_000_000n,
  initialRealTokenReserves: 793_100_000_000_000n,
  tokenTotalSupply: 1_000_000_000_000_000n,
  // Only read when no FeeConfig is passed; kept equal to the first tier so both paths agree.
  feeBasisPoints: 95n,
  withdrawAuthority: WITHDRAW_AUTHORITY,
  enableMigrate: true,
  poolMigrationFee: 15_000_001n,
  creatorFeeBasisPoints: 30n,
  feeRecipients: FEE_RECIPIENTS.slice(1),
  setCreatorAuthority: PUMP_AUTHORITY,
  adminSetCreatorAuthority: PUMP_AUTHORITY,
  createV2Enabled: true,
  whitelistPda: PublicKey.default,
  reservedFeeRecipient: RESERVED_FEE_RECIPIENTS[0],
  mayhemModeEnabled: true,
  reservedFeeRecipients: RESERVED_FEE_RECIPIENTS.slice(1),
  isCashbackEnabled: false,
  buybackFeeRecipients: BUYBACK_FEE_RECIPIENTS,
  // Zero: how mainnet splits a buyback share out of a trade is not published, so none is taken.
  buybackBasisPoints: 0n,
  initialVirtualQuoteReserves: 4_292_000_000n,
  // Only SOL curves are emulated, so no token quote is whitelisted.
  whitelistedQuoteMints: [PublicKey.default],
  creatorFeeConfigurable: true,
  maxConfigurableCreatorFeeBps: 300n,
  holderRewardClaimAuthority: PUMP_AUTHORITY,
  isHolderRewardEnabled: true,
};

const SOL = 1_000_000_000n;

/** Bonding-curve trades pay 0.95% protocol + 0.30% creator; the later tiers are mainnet's PumpSwap schedule. */
const tiers = (rows: [bigint, bigint][], first: FeeTier['fees']): FeeTier[] =>
  rows.map(([threshold, creatorFeeBps], i) => ({
    marketCapLamportsThreshold: threshold,
    fees: i === 0 ? first : { lpFeeBps: 20n, protocolFeeBps: 5n, creatorFeeBps },
  }));

const CURVE_FEES = { lpFeeBps: 0n, protocolFeeBps: 95n, creatorFeeBps: 30n };

export const GENESIS_FEE_CONFIG: FeeConfig = {
  bump: FEE_CONFIG_BUMP,
  admin: PUMP_AUTHORITY,
  flatFees: { lpFeeBps: 25n, protocolFeeBps: 5n, creatorFeeBps: 0n },
  feeTiers: tiers(
    [
      [0n, 30n], [420n * SOL, 95n], [1_470n * SOL, 90n], [2_460n * SOL, 85n], [3_440n * SOL, 80n], [4_420n * SOL, 75n],
      [9_820n * SOL, 70n], [14_740n * SOL, 65n], [19_650n * SOL, 60n], [24_560n * SOL, 55n], [29_470n * SOL, 50n],
      [34_380n * SOL, 45n], [39_300n * SOL, 40n], [44_210n * SOL, 35n], [49_120n * SOL, 30n], [54_030n * SOL, 28n],
      [58_940n * SOL, 25n], [63_860n * SOL, 23n], [68_770n * SOL, 20n], [73_681n * SOL, 18n], [78_590n * SOL, 15n],
      [83_500n * SOL, 13n], [88_400n * SOL, 10n], [93_330n * SOL, 8n], [98_240n * SOL, 5n],
    ],
    CURVE_FEES,
  ),
  stableFeeTiers: tiers(
    [0, 59, 300, 500, 700, 900, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000, 10_000, 11_000, 12_000, 13_000, 14_000, 15_000, 16_000, 17_000, 18_000, 19_000, 20_000].map(
      (thousandUsdc, i): [bigint, bigint] => [BigInt(thousandUsdc) * 1_000_000_000n, [30n, 95n, 90n, 85n, 80n, 75n, 70n, 65n, 60n, 55n, 50n, 45n, 40n, 35n, 30n, 28n, 25n, 23n, 20n, 18n, 15n, 13n, 10n, 8n, 5n][i]],
    ),
    CURVE_FEES,
  ),
  exoticFlatFees: { lpFeeBps: 0n, protocolFeeBps: 0n, creatorFeeBps: 0n },
};

/** No token-incentive window: volume is tracked per user but earns no PUMP. */
export const GENESIS_GLOBAL_VOLUME_ACCUMULATOR: GlobalVolumeAccumulator = {
  startTime: 0n,
  endTime: 0n,
  secondsInADay: 86_400n,
  mint: PUMP_TOKEN_MINT,
  totalTokenSupply: Array.from({ length: 30 }, () => 0n),
  solVolumes: Array.from({ length: 30 }, () => 0n),
};

export function writePumpGenesis(init: GenesisContext): void {
  const owned = (owner: PublicKey, data: Buffer) => ({ lamports: init.rentExempt(data.length), data, owner, executable: false });
  init.setAccount(GLOBAL, owned(PUMP_PROGRAM_ID, encodeGlobal(GENESIS_GLOBAL)));
  init.setAccount(GLOBAL_VOLUME_ACCUMULATOR, owned(PUMP_PROGRAM_ID, encodeGlobalVolumeAccumulator(GENESIS_GLOBAL_VOLUME_ACCUMULATOR)));
  init.setAccount(FEE_CONFIG, owned(PUMP_FEES_PROGRAM_ID, encodeFeeConfig(GENESIS_FEE_CONFIG)));
  // Recipients exist on mainnet; funding them here keeps a first fee below the rent minimum from failing.
  for (const recipient of [...FEE_RECIPIENTS, ...RESERVED_FEE_RECIPIENTS, ...BUYBACK_FEE_RECIPIENTS, WITHDRAW_AUTHORITY]) {
    init.setAccount(recipient, owned(SystemProgram.programId, Buffer.alloc(0)));
  }
  init.setAccount(SDK_SIMULATION_SIGNER, { lamports: 1_000_000_000n, data: Buffer.alloc(0), owner: SystemProgram.programId, executable: false });
}
