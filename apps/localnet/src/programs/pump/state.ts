import { PublicKey } from '@solana/web3.js';
import { accountDiscriminator, decodeType, encodeAccount } from './codec';

/**
 * Account layouts of the pump program (and the pump-fees FeeConfig it reads), encoded from the pump IDL.
 * The pump-fees emulator reuses `encodeFeeConfig` / `decodeFeeConfig` and the FEE_CONFIG_* sizes.
 */

/** pump `Global::SIZE`: every field the IDL declares, discriminator included. */
export const GLOBAL_SIZE = 1087;
/** pump `BondingCurve::NEW_SIZE`: what `create_v2` allocates and `extend_account` grows older curves to. */
export const BONDING_CURVE_SIZE = 151;
/** `UserVolumeAccumulator::LEN`: the 106 bytes of fields plus the program's reserved tail. */
export const USER_VOLUME_ACCUMULATOR_SIZE = 137;
export const GLOBAL_VOLUME_ACCUMULATOR_SIZE = 8 + 3 * 8 + 32 + 2 * 30 * 8;
/** pump-fees `FeeConfig` lengths; the length selects the layout version (see `decodeFeeConfig`). */
export const FEE_CONFIG_INITIALIZE_SIZE = 2512;
export const FEE_CONFIG_POST_STABLE_SIZE = 4073;
export const FEE_CONFIG_CURRENT_SIZE = 4097;

export interface Global {
  initialized: boolean;
  authority: PublicKey;
  feeRecipient: PublicKey;
  initialVirtualTokenReserves: bigint;
  initialVirtualSolReserves: bigint;
  initialRealTokenReserves: bigint;
  tokenTotalSupply: bigint;
  feeBasisPoints: bigint;
  withdrawAuthority: PublicKey;
  enableMigrate: boolean;
  poolMigrationFee: bigint;
  creatorFeeBasisPoints: bigint;
  feeRecipients: PublicKey[];
  setCreatorAuthority: PublicKey;
  adminSetCreatorAuthority: PublicKey;
  createV2Enabled: boolean;
  whitelistPda: PublicKey;
  reservedFeeRecipient: PublicKey;
  mayhemModeEnabled: boolean;
  reservedFeeRecipients: PublicKey[];
  isCashbackEnabled: boolean;
  buybackFeeRecipients: PublicKey[];
  buybackBasisPoints: bigint;
  initialVirtualQuoteReserves: bigint;
  whitelistedQuoteMints: PublicKey[];
  creatorFeeConfigurable: boolean;
  maxConfigurableCreatorFeeBps: bigint;
  holderRewardClaimAuthority: PublicKey;
  isHolderRewardEnabled: boolean;
}

export interface BondingCurve {
  virtualTokenReserves: bigint;
  virtualQuoteReserves: bigint;
  realTokenReserves: bigint;
  realQuoteReserves: bigint;
  tokenTotalSupply: bigint;
  complete: boolean;
  creator: PublicKey;
  isMayhemMode: boolean;
  isCashbackCoin: boolean;
  /** The zero key for a SOL curve. */
  quoteMint: PublicKey;
  creatorFeeBps: bigint;
  canEditCreatorFee: boolean;
  isHolderReward: boolean;
}

export interface Fees {
  lpFeeBps: bigint;
  protocolFeeBps: bigint;
  creatorFeeBps: bigint;
}

export interface FeeTier {
  marketCapLamportsThreshold: bigint;
  fees: Fees;
}

export interface FeeConfig {
  bump: number;
  admin: PublicKey;
  flatFees: Fees;
  feeTiers: FeeTier[];
  stableFeeTiers: FeeTier[];
  exoticFlatFees: Fees;
}

export interface GlobalVolumeAccumulator {
  startTime: bigint;
  endTime: bigint;
  secondsInADay: bigint;
  mint: PublicKey;
  totalTokenSupply: bigint[];
  solVolumes: bigint[];
}

export interface UserVolumeAccumulator {
  user: PublicKey;
  needsClaim: boolean;
  totalUnclaimedTokens: bigint;
  totalClaimedTokens: bigint;
  currentSolVolume: bigint;
  lastUpdateTimestamp: bigint;
  hasTotalClaimedTokens: boolean;
  cashbackEarned: bigint;
  totalCashbackClaimed: bigint;
  stableCashbackEarned: bigint;
  totalStableCashbackClaimed: bigint;
}

export interface Shareholder {
  address: PublicKey;
  shareBps: number;
}

export interface SharingConfig {
  bump: number;
  version: number;
  status: 'Paused' | 'Active';
  mint: PublicKey;
  admin: PublicKey;
  adminRevoked: boolean;
  shareholders: Shareholder[];
}

const ZERO_FEES: Fees = { lpFeeBps: 0n, protocolFeeBps: 0n, creatorFeeBps: 0n };

function padded(data: Buffer, size: number): Buffer {
  if (data.length > size) throw new RangeError(`account needs ${data.length} bytes, has ${size}`);
  return Buffer.concat([data, Buffer.alloc(size - data.length)]);
}

/** True when `data` starts with the discriminator of the IDL account `name`. */
export const isAccount = (name: string, data: Buffer): boolean => data.length >= 8 && data.subarray(0, 8).equals(accountDiscriminator(name));

/**
 * A decoder that keeps its last answer, for the accounts every trade reads and only an admin rewrites: decoding
 * the fee config's tiers took about 0.46 ms and Global about 0.06 ms, twice a trade (preflight and execution).
 * The answer is shared by every later call, so it is frozen: a caller that wants a changed copy spreads it.
 */
function lastDecoded<T extends object>(decode: (data: Buffer) => T): (data: Buffer) => T {
  let last: { data: Buffer; value: T } | undefined;
  return (data) => {
    if (last && last.data.equals(data)) return last.value;
    const value = frozen(decode(data));
    last = { data: Buffer.from(data), value };
    return value;
  };
}

/** Freezes plain objects and arrays all the way down; keys and bigints are left as they are. */
function frozen<T>(value: T): T {
  if (value !== null && typeof value === 'object' && (Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype)) {
    for (const inner of Object.values(value)) frozen(inner);
    Object.freeze(value);
  }
  return value;
}

function decodeAccount<T>(name: string, data: Buffer, size: number): T {
  if (!isAccount(name, data)) throw new Error(`not a ${name} account`);
  // Older, shorter layouts read their missing trailing fields as zero, as the program's versioned readers do.
  return decodeType<T>(name, padded(data.subarray(8), Math.max(size - 8, data.length - 8)));
}

export const encodeGlobal = (global: Global): Buffer => padded(encodeAccount('Global', global), GLOBAL_SIZE);
export const decodeGlobal = lastDecoded((data): Global => decodeAccount<Global>('Global', data, GLOBAL_SIZE));

/** Re-encodes a curve at its account's current length (never shorter than the layout itself). */
export const encodeBondingCurve = (curve: BondingCurve, size = BONDING_CURVE_SIZE): Buffer => padded(encodeAccount('BondingCurve', curve), size);
export const decodeBondingCurve = (data: Buffer): BondingCurve => decodeAccount<BondingCurve>('BondingCurve', data, BONDING_CURVE_SIZE);

export const encodeGlobalVolumeAccumulator = (accumulator: GlobalVolumeAccumulator): Buffer =>
  padded(encodeAccount('GlobalVolumeAccumulator', accumulator), GLOBAL_VOLUME_ACCUMULATOR_SIZE);
export const decodeGlobalVolumeAccumulator = (data: Buffer): GlobalVolumeAccumulator =>
  decodeAccount<GlobalVolumeAccumulator>('GlobalVolumeAccumulator', data, GLOBAL_VOLUME_ACCUMULATOR_SIZE);

export const encodeUserVolumeAccumulator = (accumulator: UserVolumeAccumulator, size = USER_VOLUME_ACCUMULATOR_SIZE): Buffer =>
  padded(encodeAccount('UserVolumeAccumulator', accumulator), size);
export const decodeUserVolumeAccumulator = (data: Buffer): UserVolumeAccumulator =>
  decodeAccount<UserVolumeAccumulator>('UserVolumeAccumulator', data, USER_VOLUME_ACCUMULATOR_SIZE);

export const newUserVolumeAccumulator = (user: PublicKey): UserVolumeAccumulator => ({
  user,
  needsClaim: false,
  totalUnclaimedTokens: 0n,
  totalClaimedTokens: 0n,
  currentSolVolume: 0n,
  lastUpdateTimestamp: 0n,
  hasTotalClaimedTokens: false,
  cashbackEarned: 0n,
  totalCashbackClaimed: 0n,
  stableCashbackEarned: 0n,
  totalStableCashbackClaimed: 0n,
});

export const decodeSharingConfig = (data: Buffer): SharingConfig => decodeAccount<SharingConfig>('SharingConfig', data, 0);

/** The FeeConfig account at the current layout, zero-padded to `size` (FEE_CONFIG_CURRENT_SIZE unless told). */
export const encodeFeeConfig = (config: FeeConfig, size = FEE_CONFIG_CURRENT_SIZE): Buffer => padded(encodeAccount('FeeConfig', config), size);

/**
 * Reads FeeConfig the way pump-fees' versioned reader does: the account length selects the layout, and a
 * field the selected version lacks reads as its default (no stable tiers, all-zero exotic fees).
 */
export const decodeFeeConfig = lastDecoded((data): FeeConfig => {
  if (data.length < FEE_CONFIG_INITIALIZE_SIZE) throw new Error(`FeeConfig of ${data.length} bytes is shorter than any layout`);
  const tiersEnd = tierVecEnd(data, FEE_TIERS_OFFSET);
  let readEnd = tiersEnd;
  if (data.length >= FEE_CONFIG_POST_STABLE_SIZE) {
    readEnd = tierVecEnd(data, tiersEnd);
    if (data.length >= FEE_CONFIG_CURRENT_SIZE) readEnd += FEES_SIZE;
  }
  // Bytes past the selected version are never read: stale tiers or a pre-allocated tail must not leak in.
  const config = decodeAccount<FeeConfig>('FeeConfig', Buffer.concat([data.subarray(0, readEnd), Buffer.alloc(4 + FEES_SIZE)]), 0);
  return { ...config, exoticFlatFees: data.length >= FEE_CONFIG_CURRENT_SIZE ? config.exoticFlatFees : ZERO_FEES };
});

const FEES_SIZE = 24;
const FEE_TIER_SIZE = 16 + FEES_SIZE;
const FEE_TIERS_OFFSET = 8 + 1 + 32 + FEES_SIZE;
const MAX_FEE_TIERS = 50;

function tierVecEnd(data: Buffer, offset: number): number {
  const count = data.readUInt32LE(offset);
  const end = offset + 4 + count * FEE_TIER_SIZE;
  if (count > MAX_FEE_TIERS || end > data.length) throw new Error(`FeeConfig declares ${count} tiers at ${offset}`);
  return end;
}
