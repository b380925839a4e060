import type { InstructionContext } from '../../../runtime/program';
import { bindAccounts, expectAddress, programAccount } from '../accounts';
import { EVENT_AUTHORITY, GLOBAL_VOLUME_ACCUMULATOR, PUMP_PROGRAM_ID, userVolumeAccumulatorPda } from '../addresses';
import { pumpError } from '../errors';
import { emitEvent } from '../events';
import {
  BONDING_CURVE_SIZE,
  decodeUserVolumeAccumulator,
  encodeUserVolumeAccumulator,
  GLOBAL_SIZE,
  isAccount,
  newUserVolumeAccumulator,
} from '../state';
import { transferFromSigner } from './trade';

/** Account housekeeping: volume accumulators and `extend_account`. */

export function initUserVolumeAccumulator(ctx: InstructionContext): void {
  const accounts = bindAccounts(ctx, 'init_user_volume_accumulator');
  const user = accounts.key('user');
  const address = accounts.key('user_volume_accumulator');
  expectAddress(address, userVolumeAccumulatorPda(user), 'user_volume_accumulator');
  expectAddress(accounts.key('event_authority'), EVENT_AUTHORITY, 'event_authority');
  ctx.createOwned(accounts.key('payer'), address, encodeUserVolumeAccumulator(newUserVolumeAccumulator(user)));
  emitEvent(ctx, 'InitUserVolumeAccumulatorEvent', { payer: accounts.key('payer'), user, timestamp: ctx.clock.unixTimestamp });
}

/** With no token-incentive window open there is nothing to move into the claimed total. */
export function syncUserVolumeAccumulator(ctx: InstructionContext): void {
  const accounts = bindAccounts(ctx, 'sync_user_volume_accumulator');
  const user = accounts.key('user');
  const address = accounts.key('user_volume_accumulator');
  expectAddress(address, userVolumeAccumulatorPda(user), 'user_volume_accumulator');
  expectAddress(accounts.key('global_volume_accumulator'), GLOBAL_VOLUME_ACCUMULATOR, 'global_volume_accumulator');
  const volume = decodeUserVolumeAccumulator(programAccount(ctx, address, PUMP_PROGRAM_ID, 'UserVolumeAccumulator').data);
  emitEvent(ctx, 'SyncUserVolumeAccumulatorEvent', {
    user,
    totalClaimedTokensBefore: volume.totalClaimedTokens,
    totalClaimedTokensAfter: volume.totalClaimedTokens,
    timestamp: ctx.clock.unixTimestamp,
  });
}

export function closeUserVolumeAccumulator(ctx: InstructionContext): void {
  const accounts = bindAccounts(ctx, 'close_user_volume_accumulator');
  const user = accounts.key('user');
  const address = accounts.key('user_volume_accumulator');
  expectAddress(address, userVolumeAccumulatorPda(user), 'user_volume_accumulator');
  const account = programAccount(ctx, address, PUMP_PROGRAM_ID, 'UserVolumeAccumulator');
  const volume = decodeUserVolumeAccumulator(account.data);
  ctx.transferOwnedLamports(address, user, account.lamports);
  ctx.writeOwned(address, Buffer.alloc(0));
  emitEvent(ctx, 'CloseUserVolumeAccumulatorEvent', {
    user,
    timestamp: ctx.clock.unixTimestamp,
    totalUnclaimedTokens: volume.totalUnclaimedTokens,
    totalClaimedTokens: volume.totalClaimedTokens,
    currentSolVolume: volume.currentSolVolume,
    lastUpdateTimestamp: volume.lastUpdateTimestamp,
  });
}

/** Grows a Global or BondingCurve written under an older, shorter layout to the current size. */
export function extendAccount(ctx: InstructionContext): void {
  const accounts = bindAccounts(ctx, 'extend_account');
  const address = accounts.key('account');
  const user = accounts.key('user');
  const account = ctx.account(address);
  if (!account || !account.owner.equals(PUMP_PROGRAM_ID)) throw pumpError('AccountTypeNotSupported');
  const newSize = isAccount('Global', account.data) ? GLOBAL_SIZE : isAccount('BondingCurve', account.data) ? BONDING_CURVE_SIZE : null;
  if (newSize === null) throw pumpError('AccountTypeNotSupported');
  if (account.data.length >= newSize) throw pumpError('NewSizeShouldBeGreaterThanCurrentSize');
  transferFromSigner(ctx, user, address, ctx.rentExempt(newSize) - account.lamports);
  ctx.writeOwned(address, Buffer.concat([account.data, Buffer.alloc(newSize - account.data.length)]));
  emitEvent(ctx, 'ExtendAccountEvent', {
    account: address,
    user,
    currentSize: BigInt(account.data.length),
    newSize: BigInt(newSize),
    timestamp: ctx.clock.unixTimestamp,
  });
}
