import { PublicKey, SystemProgram } from '@solana/web3.js';
import { createTransferCheckedInstruction } from '@solana/spl-token';
import type { InstructionAccount, InstructionContext } from '../../../runtime/program';
import { anchorError } from '../../../runtime/program';
import { BoundAccounts, bindAccounts, expectAddress, lamportsOf, MintInfo, mintInfo, programAccount } from '../accounts';
import {
  ata,
  bondingCurvePda,
  bondingCurveV2Pda,
  creatorVaultPda,
  EVENT_AUTHORITY,
  FEE_CONFIG,
  GLOBAL,
  GLOBAL_VOLUME_ACCUMULATOR,
  PUMP_FEES_PROGRAM_ID,
  PUMP_PROGRAM_ID,
  userVolumeAccumulatorPda,
} from '../addresses';
import { decodeInstructionArgs } from '../codec';
import { pumpError } from '../errors';
import { emitEvent, TradeEvent } from '../events';
import {
  afterBuy,
  afterSell,
  BPS,
  bigMin,
  buyCost,
  buyExactSolInTokens,
  chargesCreatorFee,
  curveFeeRates,
  FeeRates,
  feeSupply,
  sellProceeds,
  TradeFees,
  tradeFees,
} from '../math';
import {
  BondingCurve,
  decodeBondingCurve,
  decodeFeeConfig,
  decodeGlobal,
  decodeUserVolumeAccumulator,
  encodeBondingCurve,
  encodeUserVolumeAccumulator,
  Global,
  newUserVolumeAccumulator,
  UserVolumeAccumulator,
} from '../state';

/** What every trade reads and checks before it moves anything. */
interface Trade {
  accounts: BoundAccounts;
  global: Global;
  mint: PublicKey;
  mintInfo: MintInfo;
  bondingCurve: PublicKey;
  curve: BondingCurve;
  curveSize: number;
  user: PublicKey;
  rates: FeeRates;
  buybackRecipient: PublicKey | null;
}

type TradeInstruction = 'buy' | 'buy_exact_sol_in' | 'sell';

function loadTrade(ctx: InstructionContext, ixName: TradeInstruction): Trade {
  const accounts = bindAccounts(ctx, ixName);
  expectAddress(accounts.key('global'), GLOBAL, 'global');
  const global = decodeGlobal(programAccount(ctx, GLOBAL, PUMP_PROGRAM_ID, 'Global').data);
  const mint = accounts.key('mint');
  const bondingCurve = accounts.key('bonding_curve');
  expectAddress(bondingCurve, bondingCurvePda(mint), 'bonding_curve');
  const curveAccount = programAccount(ctx, bondingCurve, PUMP_PROGRAM_ID, 'BondingCurve');
  const curve = decodeBondingCurve(curveAccount.data);
  const info = mintInfo(ctx, mint);
  if (!info.tokenProgram.equals(accounts.key('token_program'))) throw anchorError('ConstraintRaw', 'token_program must own the mint');
  expectAddress(accounts.key('associated_bonding_curve'), ata(bondingCurve, mint, info.tokenProgram), 'associated_bonding_curve');
  expectAddress(accounts.key('creator_vault'), creatorVaultPda(curve.creator), 'creator_vault');
  expectAddress(accounts.key('event_authority'), EVENT_AUTHORITY, 'event_authority');
  expectAddress(accounts.key('fee_config'), FEE_CONFIG, 'fee_config');
  const feeConfig = decodeFeeConfig(programAccount(ctx, FEE_CONFIG, PUMP_FEES_PROGRAM_ID, 'FeeConfig').data);

  if (curve.complete) throw pumpError('BondingCurveComplete');
  const allowed = curve.isMayhemMode
    ? [global.reservedFeeRecipient, ...global.reservedFeeRecipients]
    : [global.feeRecipient, ...global.feeRecipients];
  if (!allowed.some((r) => r.equals(accounts.key('fee_recipient')))) throw pumpError('NotAuthorized', 'fee_recipient is not one of Global\'s');

  return {
    accounts,
    global,
    mint,
    mintInfo: info,
    bondingCurve,
    curve,
    curveSize: curveAccount.data.length,
    user: accounts.key('user'),
    rates: curveFeeRates(global, feeConfig, curve, feeSupply(curve, info.supply)),
    buybackRecipient: buybackRecipient(accounts.remaining, mint, global, ixName),
  };
}

/**
 * The trailing accounts: `bonding_curve_v2` (after the cashback `user_volume_accumulator` on a cashback
 * sell), then the buyback fee recipient, which must be one of Global's.
 */
function buybackRecipient(remaining: readonly InstructionAccount[], mint: PublicKey, global: Global, ixName: TradeInstruction): PublicKey | null {
  const v2 = bondingCurveV2Pda(mint);
  const at = remaining.findIndex((a) => a.pubkey.equals(v2));
  if (at < 0 || at > (ixName === 'sell' ? 1 : 0)) throw pumpError('InvalidBondingCurveV2');
  const recipient = remaining[at + 1];
  if (!recipient) {
    if (global.buybackBasisPoints > 0n) throw pumpError('BuybackFeeRecipientMissing');
    return null;
  }
  if (!global.buybackFeeRecipients.some((r) => r.equals(recipient.pubkey))) throw pumpError('BuybackFeeRecipientNotAuthorized');
  if (!recipient.isWritable) throw anchorError('ConstraintMut', 'buyback fee recipient must be writable');
  return recipient.pubkey;
}

export function buy(ctx: InstructionContext): void {
  const args = decodeInstructionArgs<{ amount: bigint; maxSolCost: bigint; trackVolume: [boolean] }>('buy', ctx.data.subarray(8));
  if (!args) throw anchorError('InstructionDidNotDeserialize');
  const trade = loadTrade(ctx, 'buy');
  executeBuy(ctx, trade, args.amount, args.maxSolCost, args.trackVolume[0], 'buy');
}

export function buyExactSolIn(ctx: InstructionContext): void {
  const args = decodeInstructionArgs<{ spendableSolIn: bigint; minTokensOut: bigint; trackVolume: [boolean] }>('buy_exact_sol_in', ctx.data.subarray(8));
  if (!args) throw anchorError('InstructionDidNotDeserialize');
  const trade = loadTrade(ctx, 'buy_exact_sol_in');
  const tokens = buyExactSolInTokens(trade.curve, trade.rates, args.spendableSolIn);
  if (tokens === 0n) throw pumpError('BuyNotEnoughSolToCoverFees');
  if (tokens < args.minTokensOut) throw pumpError('BuySlippageBelowMinTokensOut');
  executeBuy(ctx, trade, tokens, args.spendableSolIn, args.trackVolume[0], 'buy_exact_sol_in');
}

function executeBuy(ctx: InstructionContext, trade: Trade, amount: bigint, maxSolCost: bigint, trackVolume: boolean, ixName: string): void {
  const { accounts, curve, user } = trade;
  if (amount === 0n) throw pumpError('BuyZeroAmount');
  if (curve.realTokenReserves === 0n) throw pumpError('NotEnoughTokensToBuy');
  const tokenAmount = bigMin(amount, curve.realTokenReserves);
  const solCost = buyCost(curve, tokenAmount);
  const fees = tradeFees(solCost, trade.rates, chargesCreatorFee(curve));
  if (solCost + fees.protocolFee + fees.creatorFee > maxSolCost) {
    throw pumpError('TooMuchSolRequired', `needs ${solCost + fees.protocolFee + fees.creatorFee}, max_sol_cost is ${maxSolCost}`);
  }

  const volume = openUserVolumeAccumulator(ctx, accounts, user);

  transferFromSigner(ctx, user, trade.bondingCurve, solCost);
  const buyback = buybackShare(trade, fees.protocolFee);
  transferFromSigner(ctx, user, accounts.key('fee_recipient'), fees.protocolFee - buyback);
  if (trade.buybackRecipient) transferFromSigner(ctx, user, trade.buybackRecipient, buyback);
  const creatorVault = accounts.key('creator_vault');
  if (fees.creatorFee > 0n) {
    topUpRent(ctx, user, creatorVault);
    transferFromSigner(ctx, user, creatorVault, fees.creatorFee);
  }

  ctx.invokeSigned(
    createTransferCheckedInstruction(
      accounts.key('associated_bonding_curve'),
      trade.mint,
      accounts.key('associated_user'),
      trade.bondingCurve,
      tokenAmount,
      trade.mintInfo.decimals,
      [],
      trade.mintInfo.tokenProgram,
    ),
    [trade.bondingCurve],
  );

  const next = afterBuy(curve, tokenAmount, solCost);
  ctx.writeOwned(trade.bondingCurve, encodeBondingCurve(next, trade.curveSize));
  if (trackVolume) {
    volume.currentSolVolume += solCost;
    volume.lastUpdateTimestamp = ctx.clock.unixTimestamp;
    ctx.writeOwned(accounts.key('user_volume_accumulator'), encodeUserVolumeAccumulator(volume, dataSize(ctx, accounts.key('user_volume_accumulator'))));
  }

  emitEvent(ctx, 'TradeEvent', tradeEvent(ctx, trade, { isBuy: true, tokenAmount, solAmount: solCost, fees, buyback, next, ixName, trackVolume, volume }));
  if (next.complete) {
    emitEvent(ctx, 'CompleteEvent', {
      user,
      mint: trade.mint,
      bondingCurve: trade.bondingCurve,
      timestamp: ctx.clock.unixTimestamp,
      quoteMint: curve.quoteMint,
    });
  }
}

export function sell(ctx: InstructionContext): void {
  const args = decodeInstructionArgs<{ amount: bigint; minSolOutput: bigint }>('sell', ctx.data.subarray(8));
  if (!args) throw anchorError('InstructionDidNotDeserialize');
  const trade = loadTrade(ctx, 'sell');
  const { accounts, curve, user } = trade;
  if (args.amount === 0n) throw pumpError('SellZeroAmount');
  const solAmount = sellProceeds(curve, args.amount);
  const fees = tradeFees(solAmount, trade.rates, chargesCreatorFee(curve));
  const proceeds = solAmount - fees.protocolFee - fees.creatorFee;
  if (proceeds < args.minSolOutput) throw pumpError('TooLittleSolReceived', `would receive ${proceeds}, min_sol_output is ${args.minSolOutput}`);
  if (proceeds < 0n || solAmount > curve.realQuoteReserves) throw pumpError('Overflow');

  ctx.invoke(
    createTransferCheckedInstruction(
      accounts.key('associated_user'),
      trade.mint,
      accounts.key('associated_bonding_curve'),
      user,
      args.amount,
      trade.mintInfo.decimals,
      [],
      trade.mintInfo.tokenProgram,
    ),
  );

  ctx.transferOwnedLamports(trade.bondingCurve, user, proceeds);
  const buyback = buybackShare(trade, fees.protocolFee);
  ctx.transferOwnedLamports(trade.bondingCurve, accounts.key('fee_recipient'), fees.protocolFee - buyback);
  if (trade.buybackRecipient) ctx.transferOwnedLamports(trade.bondingCurve, trade.buybackRecipient, buyback);
  const creatorVault = accounts.key('creator_vault');
  if (fees.creatorFee > 0n) {
    topUpRent(ctx, user, creatorVault);
    ctx.transferOwnedLamports(trade.bondingCurve, creatorVault, fees.creatorFee);
  }

  const next = afterSell(curve, args.amount, solAmount);
  ctx.writeOwned(trade.bondingCurve, encodeBondingCurve(next, trade.curveSize));
  emitEvent(ctx, 'TradeEvent', tradeEvent(ctx, trade, { isBuy: false, tokenAmount: args.amount, solAmount, fees, buyback, next, ixName: 'sell', trackVolume: false, volume: null }));
}

/** The buyback recipient's part of the protocol fee (none while Global takes no buyback share). */
function buybackShare(trade: Trade, protocolFee: bigint): bigint {
  return trade.buybackRecipient ? (protocolFee * trade.global.buybackBasisPoints) / BPS : 0n;
}

/** `init_if_needed` of the buyer's volume accumulator, paid by the buyer. */
function openUserVolumeAccumulator(ctx: InstructionContext, accounts: BoundAccounts, user: PublicKey): UserVolumeAccumulator {
  expectAddress(accounts.key('global_volume_accumulator'), GLOBAL_VOLUME_ACCUMULATOR, 'global_volume_accumulator');
  const address = accounts.key('user_volume_accumulator');
  expectAddress(address, userVolumeAccumulatorPda(user), 'user_volume_accumulator');
  const existing = ctx.account(address);
  if (existing && existing.data.length > 0) return decodeUserVolumeAccumulator(programAccount(ctx, address, PUMP_PROGRAM_ID, 'UserVolumeAccumulator').data);
  const fresh = newUserVolumeAccumulator(user);
  ctx.createOwned(user, address, encodeUserVolumeAccumulator(fresh));
  return fresh;
}

const dataSize = (ctx: InstructionContext, pubkey: PublicKey): number => ctx.account(pubkey)?.data.length ?? 0;

export function transferFromSigner(ctx: InstructionContext, from: PublicKey, to: PublicKey, lamports: bigint): void {
  if (lamports > 0n) ctx.invoke(SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports }));
}

/** A system account that receives fees must stay rent-exempt; the trader pays the gap the first time. */
export function topUpRent(ctx: InstructionContext, payer: PublicKey, account: PublicKey): void {
  const gap = ctx.rentExempt(0) - lamportsOf(ctx, account);
  transferFromSigner(ctx, payer, account, gap);
}

interface TradeOutcome {
  isBuy: boolean;
  tokenAmount: bigint;
  solAmount: bigint;
  fees: TradeFees;
  buyback: bigint;
  next: BondingCurve;
  ixName: string;
  trackVolume: boolean;
  volume: UserVolumeAccumulator | null;
}

function tradeEvent(ctx: InstructionContext, trade: Trade, outcome: TradeOutcome): TradeEvent {
  const { next, fees, volume } = outcome;
  const holderRewards = trade.curve.isHolderReward;
  return {
    mint: trade.mint,
    solAmount: outcome.solAmount,
    tokenAmount: outcome.tokenAmount,
    isBuy: outcome.isBuy,
    user: trade.user,
    timestamp: ctx.clock.unixTimestamp,
    virtualSolReserves: next.virtualQuoteReserves,
    virtualTokenReserves: next.virtualTokenReserves,
    realSolReserves: next.realQuoteReserves,
    realTokenReserves: next.realTokenReserves,
    feeRecipient: trade.accounts.key('fee_recipient'),
    feeBasisPoints: trade.rates.protocolFeeBps,
    fee: fees.protocolFee,
    creator: trade.curve.creator,
    creatorFeeBasisPoints: chargesCreatorFee(trade.curve) ? trade.rates.creatorFeeBps : 0n,
    creatorFee: fees.creatorFee,
    trackVolume: outcome.trackVolume,
    totalUnclaimedTokens: volume?.totalUnclaimedTokens ?? 0n,
    totalClaimedTokens: volume?.totalClaimedTokens ?? 0n,
    currentSolVolume: volume?.currentSolVolume ?? 0n,
    lastUpdateTimestamp: volume?.lastUpdateTimestamp ?? 0n,
    ixName: outcome.ixName,
    mayhemMode: trade.curve.isMayhemMode,
    cashbackFeeBasisPoints: 0n,
    cashback: 0n,
    buybackFeeBasisPoints: outcome.buyback > 0n ? trade.global.buybackBasisPoints : 0n,
    buybackFee: outcome.buyback,
    shareholders: [],
    quoteMint: trade.curve.quoteMint,
    quoteAmount: outcome.solAmount,
    virtualQuoteReserves: next.virtualQuoteReserves,
    realQuoteReserves: next.realQuoteReserves,
    holderRewardsBps: holderRewards ? trade.rates.creatorFeeBps : 0n,
    holderRewards: holderRewards ? fees.creatorFee : 0n,
  };
}
