import BN from 'bn.js';
import { PublicKey } from '@solana/web3.js';
import { OFFLINE_PUMP_AMM_PROGRAM, POOL_ACCOUNT_NEW_SIZE, pumpAmmJson } from '@pump-fun/pump-swap-sdk';
import { findPda } from '../../runtime/pda';

/**
 * PumpSwap account layouts, read and written through the coder of the IDL the swap SDK ships, so the emulator's
 * bytes are the bytes the SDK decodes. Amounts are bigint here and BN only at the coder boundary.
 */

export const PUMP_AMM_PROGRAM_ID = new PublicKey('pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA');
export const PUMP_PROGRAM_ID = new PublicKey('6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P');
export const PUMP_FEES_PROGRAM_ID = new PublicKey('pfeeUxB6jkeY1Hxd7CsFCAjcbHA9rWtchMGdZ6VojVZ');

const pda = (seeds: Buffer[], programId = PUMP_AMM_PROGRAM_ID) => findPda(seeds, programId);

export const GLOBAL_CONFIG = pda([Buffer.from('global_config')])[0];
export const EVENT_AUTHORITY = pda([Buffer.from('__event_authority')])[0];
export const GLOBAL_VOLUME_ACCUMULATOR = pda([Buffer.from('global_volume_accumulator')])[0];
export const AMM_FEE_CONFIG = pda([Buffer.from('fee_config'), PUMP_AMM_PROGRAM_ID.toBuffer()], PUMP_FEES_PROGRAM_ID)[0];

export function poolAddress(index: number, creator: PublicKey, baseMint: PublicKey, quoteMint: PublicKey): [PublicKey, number] {
  const indexLe = Buffer.alloc(2);
  indexLe.writeUInt16LE(index);
  return pda([Buffer.from('pool'), indexLe, creator.toBuffer(), baseMint.toBuffer(), quoteMint.toBuffer()]);
}
export const lpMintAddress = (pool: PublicKey) => pda([Buffer.from('pool_lp_mint'), pool.toBuffer()])[0];
export const coinCreatorVaultAuthority = (coinCreator: PublicKey) => pda([Buffer.from('creator_vault'), coinCreator.toBuffer()])[0];
export const userVolumeAccumulatorAddress = (user: PublicKey) => pda([Buffer.from('user_volume_accumulator'), user.toBuffer()])[0];
export const pumpPoolAuthority = (mint: PublicKey) => pda([Buffer.from('pool-authority'), mint.toBuffer()], PUMP_PROGRAM_ID)[0];
export const pumpCreatorVault = (creator: PublicKey) => pda([Buffer.from('creator-vault'), creator.toBuffer()], PUMP_PROGRAM_ID)[0];
export const sharingConfigAddress = (mint: PublicKey) => pda([Buffer.from('sharing-config'), mint.toBuffer()], PUMP_FEES_PROGRAM_ID)[0];

/** Canonical pump pools are created by pump's `migrate` with the pool-authority PDA of the mint as creator. */
export const isPumpPool = (baseMint: PublicKey, creator: PublicKey) => pumpPoolAuthority(baseMint).equals(creator);

/** New pools are created at the grown size, so the SDK's builders never prepend `extend_account`. */
export const POOL_ACCOUNT_SIZE = POOL_ACCOUNT_NEW_SIZE;
export const GLOBAL_CONFIG_SIZE = 949;
export const USER_VOLUME_ACCUMULATOR_SIZE = 90;
export const GLOBAL_VOLUME_ACCUMULATOR_SIZE = 544;

const coder = OFFLINE_PUMP_AMM_PROGRAM.coder;

type IdlEntry = { name: string; discriminator: number[] };
const discriminatorOf = (entries: IdlEntry[], name: string) => {
  const entry = entries.find((e) => e.name === name);
  if (!entry) throw new Error(`pump_amm IDL has no ${name}`);
  return Buffer.from(entry.discriminator);
};
export const accountDiscriminator = (name: string) => discriminatorOf(pumpAmmJson.accounts, name);

function encodeAccount(idlName: string, typeName: string, value: object, size: number): Buffer {
  const body = coder.types.encode(typeName, value);
  const out = Buffer.alloc(Math.max(size, 8 + body.length));
  accountDiscriminator(idlName).copy(out, 0);
  body.copy(out, 8);
  return out;
}

function decodeAccount<T>(idlName: string, typeName: string, data: Buffer, size: number): T | null {
  if (data.length < 8 || !data.subarray(0, 8).equals(accountDiscriminator(idlName))) return null;
  const padded = data.length >= size ? data : Buffer.concat([data, Buffer.alloc(size - data.length)]);
  return coder.types.decode<T>(typeName, padded.subarray(8));
}

const big = (n: BN) => BigInt(n.toString());
const bn = (n: bigint) => new BN(n.toString());

export interface Pool {
  poolBump: number;
  index: number;
  creator: PublicKey;
  baseMint: PublicKey;
  quoteMint: PublicKey;
  lpMint: PublicKey;
  poolBaseTokenAccount: PublicKey;
  poolQuoteTokenAccount: PublicKey;
  lpSupply: bigint;
  coinCreator: PublicKey;
  isMayhemMode: boolean;
  isCashbackCoin: boolean;
  virtualQuoteReserves: bigint;
  creatorFeeBps: bigint;
  canEditCreatorFee: boolean;
}

type PoolCoded = Omit<Pool, 'lpSupply' | 'virtualQuoteReserves' | 'creatorFeeBps'> & { lpSupply: BN; virtualQuoteReserves: BN; creatorFeeBps: BN };

export function encodePool(pool: Pool, size = POOL_ACCOUNT_SIZE): Buffer {
  return encodeAccount('Pool', 'pool', { ...pool, lpSupply: bn(pool.lpSupply), virtualQuoteReserves: bn(pool.virtualQuoteReserves), creatorFeeBps: bn(pool.creatorFeeBps) }, size);
}

export function decodePool(data: Buffer): Pool | null {
  const p = decodeAccount<PoolCoded>('Pool', 'pool', data, 270);
  return p && { ...p, lpSupply: big(p.lpSupply), virtualQuoteReserves: big(p.virtualQuoteReserves), creatorFeeBps: big(p.creatorFeeBps) };
}

export interface GlobalConfig {
  admin: PublicKey;
  lpFeeBasisPoints: bigint;
  protocolFeeBasisPoints: bigint;
  disableFlags: number;
  protocolFeeRecipients: PublicKey[];
  coinCreatorFeeBasisPoints: bigint;
  adminSetCoinCreatorAuthority: PublicKey;
  whitelistPda: PublicKey;
  reservedFeeRecipient: PublicKey;
  mayhemModeEnabled: boolean;
  reservedFeeRecipients: PublicKey[];
  isCashbackEnabled: boolean;
  buybackFeeRecipients: PublicKey[];
  buybackBasisPoints: bigint;
  boostAuthority: PublicKey;
  boostEnabled: boolean;
  creatorFeeConfigurable: boolean;
  maxConfigurableCreatorFeeBps: bigint;
}

const GLOBAL_CONFIG_AMOUNTS = ['lpFeeBasisPoints', 'protocolFeeBasisPoints', 'coinCreatorFeeBasisPoints', 'buybackBasisPoints', 'maxConfigurableCreatorFeeBps'] as const;

export function encodeGlobalConfig(config: GlobalConfig): Buffer {
  const coded: Record<string, unknown> = { ...config };
  for (const key of GLOBAL_CONFIG_AMOUNTS) coded[key] = bn(config[key]);
  return encodeAccount('GlobalConfig', 'globalConfig', coded, GLOBAL_CONFIG_SIZE);
}

export function decodeGlobalConfig(data: Buffer): GlobalConfig | null {
  const coded = decodeAccount<Record<string, unknown>>('GlobalConfig', 'globalConfig', data, GLOBAL_CONFIG_SIZE);
  if (!coded) return null;
  for (const key of GLOBAL_CONFIG_AMOUNTS) coded[key] = big(coded[key] as BN);
  return coded as unknown as GlobalConfig;
}

/** Bits of `GlobalConfig.disable_flags`. */
export const DISABLE = { createPool: 1, deposit: 2, withdraw: 4, buy: 8, sell: 16 } as const;

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
}

const VOLUME_AMOUNTS = ['totalUnclaimedTokens', 'totalClaimedTokens', 'currentSolVolume', 'lastUpdateTimestamp', 'cashbackEarned', 'totalCashbackClaimed'] as const;

export function encodeUserVolumeAccumulator(acc: UserVolumeAccumulator): Buffer {
  const coded: Record<string, unknown> = { ...acc };
  for (const key of VOLUME_AMOUNTS) coded[key] = bn(acc[key]);
  return encodeAccount('UserVolumeAccumulator', 'userVolumeAccumulator', coded, USER_VOLUME_ACCUMULATOR_SIZE);
}

export function decodeUserVolumeAccumulator(data: Buffer): UserVolumeAccumulator | null {
  const coded = decodeAccount<Record<string, unknown>>('UserVolumeAccumulator', 'userVolumeAccumulator', data, USER_VOLUME_ACCUMULATOR_SIZE);
  if (!coded) return null;
  for (const key of VOLUME_AMOUNTS) coded[key] = big(coded[key] as BN);
  return coded as unknown as UserVolumeAccumulator;
}

export const emptyUserVolumeAccumulator = (user: PublicKey): UserVolumeAccumulator => ({
  user,
  needsClaim: false,
  totalUnclaimedTokens: 0n,
  totalClaimedTokens: 0n,
  currentSolVolume: 0n,
  lastUpdateTimestamp: 0n,
  hasTotalClaimedTokens: false,
  cashbackEarned: 0n,
  totalCashbackClaimed: 0n,
});

/** A global volume accumulator with no incentive mint: token incentives are off on the localnet. */
export function encodeIdleGlobalVolumeAccumulator(): Buffer {
  const zeros = Array.from({ length: 30 }, () => new BN(0));
  return encodeAccount(
    'GlobalVolumeAccumulator',
    'globalVolumeAccumulator',
    { startTime: new BN(0), endTime: new BN(0), secondsInADay: new BN(86_400), mint: PublicKey.default, totalTokenSupply: zeros, solVolumes: zeros },
    GLOBAL_VOLUME_ACCUMULATOR_SIZE,
  );
}

/** An anchor event as the program logs it: discriminator + borsh body. Values are plain (bigint amounts allowed). */
export function encodeEvent(name: string, fields: Record<string, unknown>): Buffer {
  const coded: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) coded[k] = typeof v === 'bigint' ? bn(v) : v;
  const typeName = name[0]!.toLowerCase() + name.slice(1);
  return Buffer.concat([discriminatorOf(pumpAmmJson.events, name), coder.types.encode(typeName, coded)]);
}
