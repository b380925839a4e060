import { createHash } from 'node:crypto';
import {
  PublicKey,
  TransactionMessage,
  VersionedTransaction,
  type AccountInfo,
  type AddressLookupTableAccount,
  type Connection,
  type TransactionInstruction,
} from '@solana/web3.js';
import { ACCOUNT_SIZE, AccountLayout, NATIVE_MINT, TOKEN_PROGRAM_ID, getAssociatedTokenAddressSync } from '@solana/spl-token';
import {
  OnlinePumpSdk,
  PUMP_SDK,
  bondingCurvePda,
  canonicalPumpPoolPda,
  creatorVaultPda,
  feeSharingConfigPda,
  getPumpProgram,
  type BondingCurve,
  type SharingConfig,
} from '@pump-fun/pump-sdk';
import { PUMP_AMM_SDK, coinCreatorVaultAtaPda, coinCreatorVaultAuthorityPda, type Pool } from '@pump-fun/pump-swap-sdk';
import { ChainError } from '../errors';
import { isRpcUnreachable } from '../errors';
import { newReference, withReference } from '../transactions';
import { decodeMint } from './market';
import { isPumpPool } from './pumpAmm';
import { readAccounts } from './marketState';
import { PACKET_DATA_SIZE } from './lookupTable';

const BPS = 10_000n;

/** Where a SOL coin's creator fees wait: pump's creator vault (lamports) and PumpSwap's coin-creator vault (wSOL). */
export interface FeeVaults {
  /** The creator the programs pay: the creator's wallet, or a sharing coin's SharingConfig. */
  creator: PublicKey;
  curveVault: PublicKey;
  poolVaultAuthority: PublicKey;
  poolVault: PublicKey;
}

export function feeVaultsOf(creator: PublicKey): FeeVaults {
  const poolVaultAuthority = coinCreatorVaultAuthorityPda(creator);
  return { creator, curveVault: creatorVaultPda(creator), poolVaultAuthority, poolVault: coinCreatorVaultAtaPda(poolVaultAuthority, NATIVE_MINT, TOKEN_PROGRAM_ID) };
}

/** A coin's creator-fee arrangement as the chain holds it now. */
export interface CoinSharing {
  mint: PublicKey;
  /** Null when the mint has no pump bonding curve. */
  curve: BondingCurve | null;
  sharingConfig: PublicKey;
  /** The decoded SharingConfig, when the coin opted into sharing. */
  config: SharingConfig | null;
  /** The canonical PumpSwap pool, once the coin graduated. */
  pool: PublicKey | null;
  poolState: Pool | null;
}

/** The mint, its curve, its sharing config and its pool in one batched read; 404 unknown_mint when it is no mint. */
export async function readCoinSharing(connection: Connection, mint: PublicKey): Promise<CoinSharing> {
  const sharingConfig = feeSharingConfigPda(mint);
  const poolAddress = canonicalPumpPoolPda(mint);
  const [mintInfo, curveInfo, configInfo, poolInfo] = await connection.getMultipleAccountsInfo([mint, bondingCurvePda(mint), sharingConfig, poolAddress], 'confirmed');
  if (!decodeMint(mint, mintInfo)) throw ChainError.refusal('unknown_mint', `${mint.toBase58()} is not a token mint on this chain`, { mint: mint.toBase58() });
  return {
    mint,
    curve: curveInfo ? PUMP_SDK.decodeBondingCurveNullable(curveInfo) : null,
    sharingConfig,
    config: configInfo ? PUMP_SDK.decodeSharingConfig(configInfo) : null,
    pool: isPumpPool(poolInfo) ? poolAddress : null,
    poolState: isPumpPool(poolInfo) ? PUMP_AMM_SDK.decodePoolNullable(poolInfo) : null,
  };
}

/**
 * Sets the shares of a sharing config that exists with its admin not revoked yet (created, its shares never set):
 * `current` are its shareholders now. The program lets the admin do this once.
 */
export async function updateSharesInstruction(
  admin: PublicKey,
  mint: PublicKey,
  current: PublicKey[],
  shares: Array<{ address: PublicKey; shareBps: number }>,
): Promise<TransactionInstruction> {
  return PUMP_SDK.updateFeeShares({ authority: admin, mint, currentShareholders: current, newShareholders: shares });
}

/** What one coin the wallet created has waiting, and where. */
export interface CoinFees {
  mint: PublicKey;
  /**
   * `sharing`: the coin pays its SharingConfig's vaults, distributed by share; `creator`: it pays the wallet's own
   * vaults (shared by every such coin, so not per coin); `holders`: a holder_reward coin; `other`: someone else is
   * its creator now; `none`: no pump bonding curve.
   */
  paidTo: 'sharing' | 'creator' | 'holders' | 'other' | 'none';
  graduated: boolean;
  config: SharingConfig | null;
  /** The wallet's share of a sharing coin (0 when it holds none). */
  shareBps: number;
  /** Lamports above rent in the coin's own (SharingConfig's) pump creator vault. */
  curveVault: bigint;
  /** wSOL in the coin's own PumpSwap coin-creator vault. */
  poolVault: bigint;
  /** What a distribution pays out now, across all shareholders: the curve vault, plus the pool vault when it can be swept. */
  pending: bigint;
  /** The wallet's part of `pending`. */
  claimable: bigint;
}

/** The wallet's own vaults, which every coin it created that does not share pays into. */
export interface OwnFees {
  vaults: FeeVaults;
  curveVault: bigint;
  poolVault: bigint;
  claimable: bigint;
  poolVaultInfo: AccountInfo<Buffer> | null;
  /** The wallet's wSOL account, where PumpSwap pays a collection before it is unwrapped. */
  wsolAccount: PublicKey;
  wsolAccountInfo: AccountInfo<Buffer> | null;
}

export interface CreatorFees {
  wallet: PublicKey;
  /** The lowest slot the reads answered at. */
  slot: number;
  coins: CoinFees[];
  own: OwnFees;
  /** RPC calls the read made (getMultipleAccountsInfo, plus the rent constants the first time). */
  calls: number;
}

interface Rents {
  empty: bigint;
  tokenAccount: bigint;
}
const rents = new WeakMap<Connection, Promise<Rents>>();

/** Rent-exempt minimums: a creator vault (no data) keeps it, and PumpSwap sweeps a wSOL vault only from a token account's rent up. */
function rentsOf(connection: Connection): { rents: Promise<Rents>; asked: boolean } {
  let known = rents.get(connection);
  if (known) return { rents: known, asked: false };
  known = Promise.all([connection.getMinimumBalanceForRentExemption(0, 'confirmed'), connection.getMinimumBalanceForRentExemption(ACCOUNT_SIZE, 'confirmed')]).then(
    ([empty, tokenAccount]) => ({ empty: BigInt(empty), tokenAccount: BigInt(tokenAccount) }),
  );
  known.catch(() => rents.delete(connection));
  rents.set(connection, known);
  return { rents: known, asked: true };
}

const lamportsAbove = (info: AccountInfo<Buffer> | null, rent: bigint) => {
  const held = BigInt(info?.lamports ?? 0) - rent;
  return held > 0n ? held : 0n;
};
const tokenAmount = (info: AccountInfo<Buffer> | null) =>
  info && info.owner.equals(TOKEN_PROGRAM_ID) && info.data.length >= AccountLayout.span ? AccountLayout.decode(info.data.subarray(0, AccountLayout.span)).amount : 0n;

/** The keys read per coin, in order: its curve, its sharing config, and that config's two vaults. */
const COIN_KEYS = 4;

/**
 * Every vault that holds creator fees for `wallet` across `mints`, in one batched read (100 keys a call): each
 * coin's curve and sharing config and the sharing config's pump and PumpSwap vaults, and the wallet's own two
 * vaults, which every coin it created that does not share pays into. Vault lamports are counted above the
 * rent the programs leave in them.
 */
export async function readCreatorFees(connection: Connection, wallet: PublicKey, mints: PublicKey[]): Promise<CreatorFees> {
  const own = feeVaultsOf(wallet);
  const wsolAccount = getAssociatedTokenAddressSync(NATIVE_MINT, wallet, true, TOKEN_PROGRAM_ID);
  const perCoin = mints.map((mint) => {
    const sharingConfig = feeSharingConfigPda(mint);
    return { mint, sharingConfig, vaults: feeVaultsOf(sharingConfig) };
  });
  const keys = [own.curveVault, own.poolVault, wsolAccount, ...perCoin.flatMap((c) => [bondingCurvePda(c.mint), c.sharingConfig, c.vaults.curveVault, c.vaults.poolVault])];
  const rent = rentsOf(connection);
  const [read, { empty, tokenAccount }] = await Promise.all([readAccounts(connection, keys), rent.rents]);
  const [ownCurve, ownPool, wsol] = read.infos;
  const coins = perCoin.map(({ mint, sharingConfig }, i): CoinFees => {
    const [curveInfo, configInfo, curveVaultInfo, poolVaultInfo] = read.infos.slice(3 + COIN_KEYS * i, 3 + COIN_KEYS * (i + 1));
    const curve = curveInfo ? PUMP_SDK.decodeBondingCurveNullable(curveInfo) : null;
    const base = { mint, graduated: curve?.complete ?? false, config: null, shareBps: 0, curveVault: 0n, poolVault: 0n, pending: 0n, claimable: 0n };
    if (!curve) return { ...base, paidTo: 'none' };
    if (curve.isHolderReward) return { ...base, paidTo: 'holders' };
    if (configInfo && curve.creator.equals(sharingConfig)) {
      const config = PUMP_SDK.decodeSharingConfig(configInfo);
      const shareBps = config.shareholders.find((s) => s.address.equals(wallet))?.shareBps ?? 0;
      const curveVault = lamportsAbove(curveVaultInfo ?? null, empty);
      const poolVault = tokenAmount(poolVaultInfo ?? null);
      // Swept pool fees land in the pump vault, whose rent they pay first when it does not exist yet.
      const swept = BigInt(curveVaultInfo?.lamports ?? 0) + (poolVault >= tokenAccount ? poolVault : 0n) - empty;
      const pending = swept > 0n ? swept : 0n;
      return { ...base, paidTo: 'sharing', config, shareBps, curveVault, poolVault, pending, claimable: (pending * BigInt(shareBps)) / BPS };
    }
    return { ...base, paidTo: curve.creator.equals(wallet) ? 'creator' : 'other' };
  });
  const curveVault = lamportsAbove(ownCurve ?? null, empty);
  const poolVault = tokenAmount(ownPool ?? null);
  return {
    wallet,
    slot: read.slot,
    coins,
    own: { vaults: own, curveVault, poolVault, claimable: curveVault + poolVault, poolVaultInfo: ownPool ?? null, wsolAccount, wsolAccountInfo: wsol ?? null },
    calls: read.calls + (rent.asked ? 2 : 0),
  };
}

/** What pump's `get_minimum_distributable_fee` view says of a sharing coin now, asked through the SDK. */
export interface Distributable {
  /** False when the simulation failed (the SDK then answers zeros): the view said nothing. */
  answered: boolean;
  minimumRequired: bigint;
  distributableFees: bigint;
  canDistribute: boolean;
}

/**
 * The SDK's own check before a distribution (`OnlinePumpSdk.getMinimumDistributableFee`): it simulates the view
 * after moving a graduated coin's pool fees into the curve vault, so the amount is what a distribution pays.
 * `payer` signs the simulation and must hold SOL.
 */
export async function minimumDistributable(connection: Connection, mint: PublicKey, payer: PublicKey): Promise<Distributable> {
  let result: Awaited<ReturnType<OnlinePumpSdk['getMinimumDistributableFee']>>;
  try {
    result = await new OnlinePumpSdk(connection).getMinimumDistributableFee(mint, payer);
  } catch (error) {
    // The SDK throws plain errors for a coin it cannot resolve (no sharing config any more, say): not distributable now.
    if (isRpcUnreachable(error)) throw error;
    return { answered: false, minimumRequired: 0n, distributableFees: 0n, canDistribute: false };
  }
  const minimumRequired = BigInt(result.minimumRequired.toString());
  // The view never asks for less than one lamport.
  return { answered: minimumRequired > 0n, minimumRequired, distributableFees: BigInt(result.distributableFees.toString()), canDistribute: result.canDistribute };
}

/** A sharing coin's distribution, built by the SDK: the pool's creator fees moved to pump first when it graduated. */
export async function distributeInstructions(connection: Connection, mint: PublicKey): Promise<TransactionInstruction[]> {
  try {
    return (await new OnlinePumpSdk(connection).buildDistributeCreatorFeesInstructions(mint)).instructions;
  } catch (error) {
    if (isRpcUnreachable(error)) throw error;
    throw ChainError.refusal('unavailable', `pump's distribution of ${mint.toBase58()} could not be built (${(error as Error).message}); nothing was sent, try again`, { mint: mint.toBase58() }, 5);
  }
}

let pumpProgram: ReturnType<typeof getPumpProgram> | undefined;

/**
 * Collects the wallet's own vaults into its wallet as SOL: pump's `collect_creator_fee` when its vault holds
 * anything, and PumpSwap's `collect_coin_creator_fee` (paid as wSOL into the wallet's wSOL account, which is
 * closed to unwrap it) when its vault does. Built offline from the read: nothing opens a vault account that
 * does not exist.
 */
export async function collectOwnInstructions(connection: Connection, wallet: PublicKey, own: OwnFees): Promise<TransactionInstruction[]> {
  const instructions: TransactionInstruction[] = [];
  if (own.curveVault > 0n) {
    pumpProgram ??= getPumpProgram(connection);
    instructions.push(await pumpProgram.methods.collectCreatorFee().accountsPartial({ creator: wallet }).instruction());
  }
  if (own.poolVault > 0n) {
    instructions.push(
      ...(await PUMP_AMM_SDK.collectCoinCreatorFee(
        {
          coinCreator: wallet,
          quoteMint: NATIVE_MINT,
          quoteTokenProgram: TOKEN_PROGRAM_ID,
          coinCreatorVaultAuthority: own.vaults.poolVaultAuthority,
          coinCreatorVaultAta: own.vaults.poolVault,
          coinCreatorTokenAccount: own.wsolAccount,
          coinCreatorVaultAtaAccountInfo: own.poolVaultInfo,
          coinCreatorTokenAccountInfo: own.wsolAccountInfo,
        },
        wallet,
      )),
    );
  }
  return instructions;
}

/**
 * The size on the wire of a transaction of `instructions` paid by `payer`, with the reference key the pipeline
 * adds; Infinity when web3.js cannot even serialize it (its buffer is the packet size).
 */
export function transactionSize(
  payer: PublicKey,
  instructions: TransactionInstruction[],
  options: { lookupTables?: AddressLookupTableAccount[]; addReference?: boolean } = {},
): number {
  const carried = options.addReference === false ? instructions : withReference(instructions, newReference());
  const message = new TransactionMessage({ payerKey: payer, recentBlockhash: PublicKey.default.toBase58(), instructions: carried });
  try {
    return new VersionedTransaction(message.compileToV0Message(options.lookupTables)).serialize().length;
  } catch (error) {
    if (error instanceof RangeError) return Number.POSITIVE_INFINITY;
    throw error;
  }
}

/**
 * Packs groups of instructions (each group one coin's sweep, kept together and in order) into as few
 * transactions as fit PACKET_DATA_SIZE, in the order given. A group too large alone gets a transaction of its own
 * and fails at the send, as it would anyway.
 */
export function packInstructionGroups<T extends { instructions: TransactionInstruction[] }>(payer: PublicKey, groups: T[]): T[][] {
  const packed: T[][] = [];
  let current: T[] = [];
  for (const group of groups) {
    const candidate = [...current, group];
    if (current.length > 0 && transactionSize(payer, candidate.flatMap((g) => g.instructions)) > PACKET_DATA_SIZE) {
      packed.push(current);
      current = [group];
    } else {
      current = candidate;
    }
  }
  if (current.length > 0) packed.push(current);
  return packed;
}

/** A short digest of what a claim sees waiting: one hold per citizen and state, so the same sweep is never sent twice at once. */
export function sweepDigest(parts: Array<string | bigint>): string {
  return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 32);
}
