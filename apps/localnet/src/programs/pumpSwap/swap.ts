import { PublicKey } from '@solana/web3.js';
import { NATIVE_MINT, createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction } from '@solana/spl-token';
import BN from 'bn.js';
import { InstructionAccount, InstructionContext, anchorError } from '../../runtime/program';
import { decodeFeeConfig } from '../pumpFees/state';
import { namedAccounts, readMint, readTokenAccount, requireAddress, requireSigner, requireWritable, tokenAmount } from './accounts';
import { ammError, AmmErrorName } from './errors';
import { BuyQuote, Fees, PoolMathError, Priced, Reserves, SellQuote, buyExactBaseOut, buyExactQuoteIn, sellExactBaseIn, tradeFees } from './math';
import {
  AMM_FEE_CONFIG,
  DISABLE,
  EVENT_AUTHORITY,
  GLOBAL_CONFIG,
  GLOBAL_VOLUME_ACCUMULATOR,
  GlobalConfig,
  PUMP_AMM_PROGRAM_ID,
  PUMP_FEES_PROGRAM_ID,
  Pool,
  UserVolumeAccumulator,
  coinCreatorVaultAuthority,
  decodeGlobalConfig,
  decodePool,
  decodeUserVolumeAccumulator,
  emptyUserVolumeAccumulator,
  encodeEvent,
  encodeUserVolumeAccumulator,
  isPumpPool,
  userVolumeAccumulatorAddress,
} from './state';
import { associatedTokenAddress } from '../../runtime/pda';

const SWAP_ACCOUNTS = [
  'pool', 'user', 'globalConfig', 'baseMint', 'quoteMint', 'userBaseTokenAccount', 'userQuoteTokenAccount',
  'poolBaseTokenAccount', 'poolQuoteTokenAccount', 'protocolFeeRecipient', 'protocolFeeRecipientTokenAccount',
  'baseTokenProgram', 'quoteTokenProgram', 'systemProgram', 'associatedTokenProgram', 'eventAuthority', 'program',
  'coinCreatorVaultAta', 'coinCreatorVaultAuthority',
] as const;
const BUY_ACCOUNTS = [...SWAP_ACCOUNTS, 'globalVolumeAccumulator', 'userVolumeAccumulator', 'feeConfig', 'feeProgram'] as const;
const SELL_ACCOUNTS = [...SWAP_ACCOUNTS, 'feeConfig', 'feeProgram'] as const;

type SwapAccounts = Record<(typeof SWAP_ACCOUNTS)[number] | 'feeConfig' | 'feeProgram', InstructionAccount>;

export function readPool(ctx: InstructionContext, account: InstructionAccount): Pool {
  const state = ctx.account(account.pubkey);
  if (!state) throw anchorError('AccountNotInitialized', `pool ${account.pubkey.toBase58()} does not exist`);
  if (!state.owner.equals(PUMP_AMM_PROGRAM_ID)) throw anchorError('AccountOwnedByWrongProgram');
  const pool = decodePool(state.data);
  if (!pool) throw anchorError('AccountDiscriminatorMismatch');
  return pool;
}

export function readGlobalConfig(ctx: InstructionContext, account: InstructionAccount): GlobalConfig {
  requireAddress(account, GLOBAL_CONFIG, 'ConstraintSeeds');
  const state = ctx.account(account.pubkey);
  const config = state && decodeGlobalConfig(state.data);
  if (!config) throw anchorError('AccountNotInitialized', 'global config does not exist');
  return config;
}

interface Market {
  pool: Pool;
  global: GlobalConfig;
  reserves: Reserves;
  fees: Fees;
  hasCoinCreator: boolean;
  baseDecimals: number;
  baseSupply: bigint;
  quoteDecimals: number;
}

/** The checks anchor's `Buy` / `Sell` account constraints make, then the pool's reserves and this trade's fee rates. */
function openMarket(ctx: InstructionContext, a: SwapAccounts, disabledBit: number, disabledError: AmmErrorName): Market {
  requireSigner(a.user);
  for (const w of [a.pool, a.userBaseTokenAccount, a.userQuoteTokenAccount, a.poolBaseTokenAccount, a.poolQuoteTokenAccount, a.protocolFeeRecipientTokenAccount, a.coinCreatorVaultAta]) requireWritable(w);
  const pool = readPool(ctx, a.pool);
  const global = readGlobalConfig(ctx, a.globalConfig);
  if (global.disableFlags & disabledBit) throw ammError(disabledError);
  if (!a.baseMint.pubkey.equals(pool.baseMint)) throw ammError('InvalidBaseMint');
  if (!a.quoteMint.pubkey.equals(pool.quoteMint)) throw ammError('InvalidQuoteMint');
  if (!a.poolBaseTokenAccount.pubkey.equals(pool.poolBaseTokenAccount)) throw ammError('InvalidPoolBaseTokenAccount');
  if (!a.poolQuoteTokenAccount.pubkey.equals(pool.poolQuoteTokenAccount)) throw ammError('InvalidPoolQuoteTokenAccount');
  const baseMint = readMint(ctx, pool.baseMint);
  const quoteMint = readMint(ctx, pool.quoteMint);
  requireAddress(a.baseTokenProgram, baseMint.program);
  requireAddress(a.quoteTokenProgram, quoteMint.program);
  requireAddress(a.eventAuthority, EVENT_AUTHORITY, 'ConstraintSeeds');

  const recipients = pool.isMayhemMode ? [global.reservedFeeRecipient, ...global.reservedFeeRecipients] : global.protocolFeeRecipients;
  const recipient = a.protocolFeeRecipient.pubkey;
  if (recipient.equals(PublicKey.default) || !recipients.some((r) => r.equals(recipient))) throw ammError('InvalidProtocolFeeRecipient');
  requireAddress(a.protocolFeeRecipientTokenAccount, associatedTokenAddress(pool.quoteMint, recipient, quoteMint.program), 'ConstraintSeeds');
  const vaultAuthority = coinCreatorVaultAuthority(pool.coinCreator);
  requireAddress(a.coinCreatorVaultAuthority, vaultAuthority, 'ConstraintSeeds');
  requireAddress(a.coinCreatorVaultAta, associatedTokenAddress(pool.quoteMint, vaultAuthority, quoteMint.program), 'ConstraintSeeds');
  requireAddress(a.feeConfig, AMM_FEE_CONFIG, 'ConstraintSeeds');
  requireAddress(a.feeProgram, PUMP_FEES_PROGRAM_ID);

  const reserves: Reserves = {
    base: tokenAmount(ctx, pool.poolBaseTokenAccount),
    quote: tokenAmount(ctx, pool.poolQuoteTokenAccount),
    virtualQuote: pool.virtualQuoteReserves,
  };
  const feeConfigState = ctx.account(AMM_FEE_CONFIG);
  const schedule = feeConfigState?.owner.equals(PUMP_FEES_PROGRAM_ID) ? decodeFeeConfig(feeConfigState.data) : null;
  const fees = tradeFees({
    schedule,
    globalFees: { lpFeeBps: global.lpFeeBasisPoints, protocolFeeBps: global.protocolFeeBasisPoints, creatorFeeBps: global.coinCreatorFeeBasisPoints },
    pumpPool: isPumpPool(pool.baseMint, pool.creator),
    quoteMint: pool.quoteMint,
    baseMintSupply: baseMint.supply,
    baseReserve: reserves.base,
    quoteReserve: reserves.quote + reserves.virtualQuote,
    isMayhemMode: pool.isMayhemMode,
    poolCreatorFeeBps: pool.creatorFeeBps,
    creatorFeeConfigurable: global.creatorFeeConfigurable,
  });

  // anchor's init_if_needed on the fee destinations: the user pays their rent the first time.
  for (const [ata, owner] of [
    [a.protocolFeeRecipientTokenAccount.pubkey, recipient],
    [a.coinCreatorVaultAta.pubkey, vaultAuthority],
  ] as const) {
    if (!ctx.account(ata)) ctx.invoke(createAssociatedTokenAccountIdempotentInstruction(a.user.pubkey, ata, owner, pool.quoteMint, quoteMint.program));
  }

  return {
    pool,
    global,
    reserves,
    fees,
    hasCoinCreator: !pool.coinCreator.equals(PublicKey.default),
    baseDecimals: baseMint.decimals,
    baseSupply: baseMint.supply,
    quoteDecimals: quoteMint.decimals,
  };
}

function priced<T>(result: Priced<T>): T {
  if (result.ok) return result.value;
  const byMath: Record<PoolMathError, AmmErrorName> = {
    ZeroBaseAmount: 'ZeroBaseAmount',
    BuyMoreBaseAmountThanPoolReserves: 'BuyMoreBaseAmountThanPoolReserves',
    BuyNotEnoughQuoteTokensToCoverFees: 'BuyNotEnoughQuoteTokensToCoverFees',
    InsufficientRealQuoteReserves: 'InsufficientRealQuoteReserves',
    Overflow: 'Overflow',
  };
  throw ammError(byMath[result.error]);
}

function transfer(ctx: InstructionContext, m: Market, side: 'base' | 'quote', from: PublicKey, to: PublicKey, authority: PublicKey, amount: bigint, a: SwapAccounts): void {
  if (amount === 0n) return;
  const [mint, decimals, program] = side === 'base' ? [m.pool.baseMint, m.baseDecimals, a.baseTokenProgram.pubkey] : [m.pool.quoteMint, m.quoteDecimals, a.quoteTokenProgram.pubkey];
  const ix = createTransferCheckedInstruction(from, mint, to, authority, amount, decimals, [], program);
  if (authority.equals(a.pool.pubkey)) ctx.invokeSigned(ix, [a.pool.pubkey]);
  else ctx.invoke(ix);
}

function trackVolume(ctx: InstructionContext, a: Record<'user' | 'userVolumeAccumulator' | 'globalVolumeAccumulator', InstructionAccount>, m: Market, quoteIn: bigint, track: boolean): UserVolumeAccumulator {
  requireAddress(a.globalVolumeAccumulator, GLOBAL_VOLUME_ACCUMULATOR, 'ConstraintSeeds');
  requireAddress(a.userVolumeAccumulator, userVolumeAccumulatorAddress(a.user.pubkey), 'ConstraintSeeds');
  requireWritable(a.userVolumeAccumulator);
  const existing = ctx.account(a.userVolumeAccumulator.pubkey);
  const acc = (existing && decodeUserVolumeAccumulator(existing.data)) ?? emptyUserVolumeAccumulator(a.user.pubkey);
  // Only SOL-quoted volume counts toward token incentives.
  if (track && m.pool.quoteMint.equals(NATIVE_MINT)) {
    acc.currentSolVolume += quoteIn;
    acc.lastUpdateTimestamp = ctx.clock.unixTimestamp;
  }
  const data = encodeUserVolumeAccumulator(acc);
  if (existing) ctx.writeOwned(a.userVolumeAccumulator.pubkey, data);
  else ctx.createOwned(a.user.pubkey, a.userVolumeAccumulator.pubkey, data);
  return acc;
}

export type BuyMode = { kind: 'exactBaseOut'; baseOut: bigint; maxQuoteIn: bigint } | { kind: 'exactQuoteIn'; spendableQuoteIn: bigint; minBaseOut: bigint };

export function buy(ctx: InstructionContext, mode: BuyMode, trackVolumeFlag: boolean): void {
  const a = namedAccounts(ctx, BUY_ACCOUNTS);
  const m = openMarket(ctx, a, DISABLE.buy, 'DisabledBuy');
  let q: BuyQuote;
  switch (mode.kind) {
    case 'exactBaseOut':
      q = priced(buyExactBaseOut(mode.baseOut, m.reserves, m.fees, m.hasCoinCreator));
      if (q.userQuoteIn > mode.maxQuoteIn) throw ammError('ExceededSlippage', `quote in ${q.userQuoteIn} exceeds max ${mode.maxQuoteIn}`);
      break;
    case 'exactQuoteIn':
      q = priced(buyExactQuoteIn(mode.spendableQuoteIn, m.reserves, m.fees, m.hasCoinCreator));
      if (q.baseOut < mode.minBaseOut) throw ammError('BuySlippageBelowMinBaseAmountOut');
      break;
    default:
      throw new Error(`unknown buy mode ${(mode satisfies never) as unknown}`);
  }
  if (q.baseOut >= m.reserves.base) throw ammError('BuyMoreBaseAmountThanPoolReserves');
  const userBase = tokenAmount(ctx, a.userBaseTokenAccount.pubkey);
  const userQuote = tokenAmount(ctx, a.userQuoteTokenAccount.pubkey);

  transfer(ctx, m, 'base', m.pool.poolBaseTokenAccount, a.userBaseTokenAccount.pubkey, a.pool.pubkey, q.baseOut, a);
  transfer(ctx, m, 'quote', a.userQuoteTokenAccount.pubkey, m.pool.poolQuoteTokenAccount, a.user.pubkey, q.quoteIn + q.lpFee, a);
  transfer(ctx, m, 'quote', a.userQuoteTokenAccount.pubkey, a.protocolFeeRecipientTokenAccount.pubkey, a.user.pubkey, q.protocolFee, a);
  transfer(ctx, m, 'quote', a.userQuoteTokenAccount.pubkey, a.coinCreatorVaultAta.pubkey, a.user.pubkey, q.coinCreatorFee, a);
  const volume = trackVolume(ctx, a, m, q.quoteIn, trackVolumeFlag);

  ctx.emitData(
    encodeEvent('BuyEvent', {
      timestamp: ctx.clock.unixTimestamp,
      baseAmountOut: q.baseOut,
      maxQuoteAmountIn: mode.kind === 'exactBaseOut' ? mode.maxQuoteIn : mode.spendableQuoteIn,
      userBaseTokenReserves: userBase,
      userQuoteTokenReserves: userQuote,
      poolBaseTokenReserves: m.reserves.base,
      poolQuoteTokenReserves: m.reserves.quote,
      quoteAmountIn: q.quoteIn,
      lpFeeBasisPoints: m.fees.lpFeeBps,
      lpFee: q.lpFee,
      protocolFeeBasisPoints: m.fees.protocolFeeBps,
      protocolFee: q.protocolFee,
      quoteAmountInWithLpFee: q.quoteIn + q.lpFee,
      userQuoteAmountIn: q.userQuoteIn,
      pool: a.pool.pubkey,
      user: a.user.pubkey,
      userBaseTokenAccount: a.userBaseTokenAccount.pubkey,
      userQuoteTokenAccount: a.userQuoteTokenAccount.pubkey,
      protocolFeeRecipient: a.protocolFeeRecipient.pubkey,
      protocolFeeRecipientTokenAccount: a.protocolFeeRecipientTokenAccount.pubkey,
      coinCreator: m.pool.coinCreator,
      coinCreatorFeeBasisPoints: m.hasCoinCreator ? m.fees.creatorFeeBps : 0n,
      coinCreatorFee: q.coinCreatorFee,
      trackVolume: trackVolumeFlag,
      totalUnclaimedTokens: volume.totalUnclaimedTokens,
      totalClaimedTokens: volume.totalClaimedTokens,
      currentSolVolume: volume.currentSolVolume,
      lastUpdateTimestamp: volume.lastUpdateTimestamp,
      minBaseAmountOut: mode.kind === 'exactQuoteIn' ? mode.minBaseOut : 0n,
      ixName: mode.kind === 'exactBaseOut' ? 'buy' : 'buy_exact_quote_in',
      cashbackFeeBasisPoints: 0n,
      cashback: 0n,
      buybackFeeBasisPoints: 0n,
      buybackFee: 0n,
      virtualQuoteReserves: new BN(m.pool.virtualQuoteReserves.toString()),
      canBoost: false,
      baseSupply: m.baseSupply,
    }),
  );
}

export function sell(ctx: InstructionContext, baseIn: bigint, minQuoteOut: bigint): void {
  const a = namedAccounts(ctx, SELL_ACCOUNTS);
  const m = openMarket(ctx, a, DISABLE.sell, 'DisabledSell');
  const q: SellQuote = priced(sellExactBaseIn(baseIn, m.reserves, m.fees, m.hasCoinCreator));
  if (q.userQuoteOut < minQuoteOut) throw ammError('ExceededSlippage', `quote out ${q.userQuoteOut} is below min ${minQuoteOut}`);
  const userBase = readTokenAccount(ctx, a.userBaseTokenAccount.pubkey)?.amount ?? 0n;
  const userQuote = tokenAmount(ctx, a.userQuoteTokenAccount.pubkey);

  transfer(ctx, m, 'base', a.userBaseTokenAccount.pubkey, m.pool.poolBaseTokenAccount, a.user.pubkey, q.baseIn, a);
  transfer(ctx, m, 'quote', m.pool.poolQuoteTokenAccount, a.userQuoteTokenAccount.pubkey, a.pool.pubkey, q.userQuoteOut, a);
  transfer(ctx, m, 'quote', m.pool.poolQuoteTokenAccount, a.protocolFeeRecipientTokenAccount.pubkey, a.pool.pubkey, q.protocolFee, a);
  transfer(ctx, m, 'quote', m.pool.poolQuoteTokenAccount, a.coinCreatorVaultAta.pubkey, a.pool.pubkey, q.coinCreatorFee, a);

  ctx.emitData(
    encodeEvent('SellEvent', {
      timestamp: ctx.clock.unixTimestamp,
      baseAmountIn: q.baseIn,
      minQuoteAmountOut: minQuoteOut,
      userBaseTokenReserves: userBase,
      userQuoteTokenReserves: userQuote,
      poolBaseTokenReserves: m.reserves.base,
      poolQuoteTokenReserves: m.reserves.quote,
      quoteAmountOut: q.quoteOut,
      lpFeeBasisPoints: m.fees.lpFeeBps,
      lpFee: q.lpFee,
      protocolFeeBasisPoints: m.fees.protocolFeeBps,
      protocolFee: q.protocolFee,
      quoteAmountOutWithoutLpFee: q.quoteOut - q.lpFee,
      userQuoteAmountOut: q.userQuoteOut,
      pool: a.pool.pubkey,
      user: a.user.pubkey,
      userBaseTokenAccount: a.userBaseTokenAccount.pubkey,
      userQuoteTokenAccount: a.userQuoteTokenAccount.pubkey,
      protocolFeeRecipient: a.protocolFeeRecipient.pubkey,
      protocolFeeRecipientTokenAccount: a.protocolFeeRecipientTokenAccount.pubkey,
      coinCreator: m.pool.coinCreator,
      coinCreatorFeeBasisPoints: m.hasCoinCreator ? m.fees.creatorFeeBps : 0n,
      coinCreatorFee: q.coinCreatorFee,
      cashbackFeeBasisPoints: 0n,
      cashback: 0n,
      buybackFeeBasisPoints: 0n,
      buybackFee: 0n,
      virtualQuoteReserves: new BN(m.pool.virtualQuoteReserves.toString()),
      canBoost: false,
      baseSupply: m.baseSupply,
    }),
  );
}
