import { SystemProgram } from '@solana/web3.js';
import { InstructionContext, anchorError } from '../../runtime/program';
import { namedAccounts, requireAddress, requireSigner, requireWritable } from './accounts';
import { ammError } from './errors';
import {
  EVENT_AUTHORITY,
  GLOBAL_CONFIG_SIZE,
  GLOBAL_VOLUME_ACCUMULATOR,
  POOL_ACCOUNT_SIZE,
  PUMP_AMM_PROGRAM_ID,
  accountDiscriminator,
  decodeUserVolumeAccumulator,
  emptyUserVolumeAccumulator,
  encodeEvent,
  encodeUserVolumeAccumulator,
  userVolumeAccumulatorAddress,
} from './state';

/** `extend_account`: grows a Pool or GlobalConfig to its current size, the user paying the extra rent. */
export function extendAccount(ctx: InstructionContext): void {
  const a = namedAccounts(ctx, ['account', 'user', 'systemProgram', 'eventAuthority', 'program'] as const);
  requireSigner(a.user);
  requireWritable(a.account);
  requireAddress(a.eventAuthority, EVENT_AUTHORITY, 'ConstraintSeeds');
  const state = ctx.account(a.account.pubkey);
  if (!state || !state.owner.equals(PUMP_AMM_PROGRAM_ID)) throw anchorError('AccountOwnedByWrongProgram');
  const discriminator = state.data.subarray(0, 8);
  const newSize = discriminator.equals(accountDiscriminator('Pool'))
    ? POOL_ACCOUNT_SIZE
    : discriminator.equals(accountDiscriminator('GlobalConfig'))
      ? GLOBAL_CONFIG_SIZE
      : null;
  if (newSize === null) throw ammError('AccountTypeNotSupported');
  const currentSize = state.data.length;
  if (newSize < currentSize) throw ammError('NewSizeLessThanCurrentSize');
  const topUp = ctx.rentExempt(newSize) - state.lamports;
  if (topUp > 0n) ctx.invoke(SystemProgram.transfer({ fromPubkey: a.user.pubkey, toPubkey: a.account.pubkey, lamports: topUp }));
  ctx.writeOwned(a.account.pubkey, Buffer.concat([state.data, Buffer.alloc(newSize - currentSize)]));
  ctx.emitData(encodeEvent('ExtendAccountEvent', { timestamp: ctx.clock.unixTimestamp, account: a.account.pubkey, user: a.user.pubkey, currentSize: BigInt(currentSize), newSize: BigInt(newSize) }));
}

export function initUserVolumeAccumulator(ctx: InstructionContext): void {
  const a = namedAccounts(ctx, ['payer', 'user', 'userVolumeAccumulator', 'systemProgram', 'eventAuthority', 'program'] as const);
  requireSigner(a.payer);
  requireAddress(a.userVolumeAccumulator, userVolumeAccumulatorAddress(a.user.pubkey), 'ConstraintSeeds');
  ctx.createOwned(a.payer.pubkey, a.userVolumeAccumulator.pubkey, encodeUserVolumeAccumulator(emptyUserVolumeAccumulator(a.user.pubkey)));
  ctx.emitData(encodeEvent('InitUserVolumeAccumulatorEvent', { payer: a.payer.pubkey, user: a.user.pubkey, timestamp: ctx.clock.unixTimestamp }));
}

/** Token incentives are off on the localnet (no incentive mint), so syncing only confirms the accumulator exists. */
export function syncUserVolumeAccumulator(ctx: InstructionContext): void {
  const a = namedAccounts(ctx, ['user', 'globalVolumeAccumulator', 'userVolumeAccumulator', 'eventAuthority', 'program'] as const);
  requireAddress(a.globalVolumeAccumulator, GLOBAL_VOLUME_ACCUMULATOR, 'ConstraintSeeds');
  requireAddress(a.userVolumeAccumulator, userVolumeAccumulatorAddress(a.user.pubkey), 'ConstraintSeeds');
  const state = ctx.account(a.userVolumeAccumulator.pubkey);
  const acc = state && decodeUserVolumeAccumulator(state.data);
  if (!acc) throw anchorError('AccountNotInitialized', 'user volume accumulator does not exist');
  ctx.emitData(
    encodeEvent('SyncUserVolumeAccumulatorEvent', {
      user: a.user.pubkey,
      totalClaimedTokensBefore: acc.totalClaimedTokens,
      totalClaimedTokensAfter: acc.totalClaimedTokens,
      timestamp: ctx.clock.unixTimestamp,
    }),
  );
}

export function closeUserVolumeAccumulator(ctx: InstructionContext): void {
  const a = namedAccounts(ctx, ['user', 'userVolumeAccumulator', 'eventAuthority', 'program'] as const);
  requireSigner(a.user);
  requireWritable(a.user);
  requireAddress(a.userVolumeAccumulator, userVolumeAccumulatorAddress(a.user.pubkey), 'ConstraintSeeds');
  const state = ctx.account(a.userVolumeAccumulator.pubkey);
  const acc = state && decodeUserVolumeAccumulator(state.data);
  if (!state || !acc) throw anchorError('AccountNotInitialized', 'user volume accumulator does not exist');
  ctx.writeOwned(a.userVolumeAccumulator.pubkey, Buffer.alloc(0));
  ctx.transferOwnedLamports(a.userVolumeAccumulator.pubkey, a.user.pubkey, state.lamports);
  ctx.emitData(
    encodeEvent('CloseUserVolumeAccumulatorEvent', {
      user: a.user.pubkey,
      timestamp: ctx.clock.unixTimestamp,
      totalUnclaimedTokens: acc.totalUnclaimedTokens,
      totalClaimedTokens: acc.totalClaimedTokens,
      currentSolVolume: acc.currentSolVolume,
      lastUpdateTimestamp: acc.lastUpdateTimestamp,
    }),
  );
}
