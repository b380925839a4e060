import { PublicKey, SystemProgram } from '@solana/web3.js';
import { NATIVE_MINT } from '@solana/spl-token';
import type { InstructionAccount, InstructionContext } from '../../../runtime/program';
import { anchorError } from '../../../runtime/program';
import { BoundAccounts, bindAccounts, expectAddress, lamportsOf, programAccount } from '../accounts';
import { ata, bondingCurvePda, creatorVaultPda, EVENT_AUTHORITY, PUMP_FEES_PROGRAM_ID, PUMP_PROGRAM_ID, sharingConfigPda } from '../addresses';
import { decodeInstructionArgs, encodeType } from '../codec';
import { pumpError } from '../errors';
import { emitEvent } from '../events';
import { BPS } from '../math';
import { BondingCurve, decodeBondingCurve, decodeSharingConfig, encodeBondingCurve, SharingConfig } from '../state';

/** What a creator vault holds above the rent minimum it must keep; the vault is a system account of a pump PDA. */
function vaultBalance(ctx: InstructionContext, vault: PublicKey): bigint {
  const held = lamportsOf(ctx, vault) - ctx.rentExempt(0);
  return held > 0n ? held : 0n;
}

const payFromVault = (ctx: InstructionContext, vault: PublicKey, to: PublicKey, lamports: bigint): void => {
  if (lamports > 0n) ctx.invokeSigned(SystemProgram.transfer({ fromPubkey: vault, toPubkey: to, lamports }), [vault]);
};

export function collectCreatorFee(ctx: InstructionContext): void {
  const accounts = bindAccounts(ctx, 'collect_creator_fee');
  const creator = accounts.key('creator');
  const vault = accounts.key('creator_vault');
  expectAddress(vault, creatorVaultPda(creator), 'creator_vault');
  expectAddress(accounts.key('event_authority'), EVENT_AUTHORITY, 'event_authority');
  // A fee-shared coin's creator is its SharingConfig: its vault pays out only through distribute_creator_fees.
  if (ctx.account(creator)?.owner.equals(PUMP_FEES_PROGRAM_ID)) throw pumpError('UnableToDistributeCreatorVaultMigratedToSharingConfig');

  const creatorFee = vaultBalance(ctx, vault);
  payFromVault(ctx, vault, creator, creatorFee);
  emitEvent(ctx, 'CollectCreatorFeeEvent', { timestamp: ctx.clock.unixTimestamp, creator, creatorFee, quoteMint: PublicKey.default });
}

/**
 * Pays a fee-shared coin's creator vault out to the SharingConfig's shareholders, each its share rounded
 * down; the rounding dust stays in the vault for the next distribution.
 */
export function distributeCreatorFees(ctx: InstructionContext): void {
  const accounts = bindAccounts(ctx, 'distribute_creator_fees');
  const { curve, sharingConfig } = loadDistribution(ctx, accounts);
  const recipients = accounts.remaining;
  if (!sameShareholders(sharingConfig, recipients)) throw pumpError('ShareholdersAndRemainingAccountsMismatch');
  payShareholders(ctx, accounts, curve, sharingConfig);
}

/**
 * `distribute_creator_fees_v2`: the quote-aware distribution pump-fees' `update_fee_shares_v2` invokes. A SOL
 * curve pays out of the creator vault's lamports exactly like v1 (shareholders alone as remaining accounts);
 * `initialize_ata` and the vault's quote token account only come into play on a token quote, and the localnet
 * has no token-quoted curves.
 */
export function distributeCreatorFeesV2(ctx: InstructionContext): void {
  const args = decodeInstructionArgs<{ initializeAta: boolean }>('distribute_creator_fees_v2', ctx.data.subarray(8));
  if (!args) throw anchorError('InstructionDidNotDeserialize');
  const accounts = bindAccounts(ctx, 'distribute_creator_fees_v2');
  const { curve, sharingConfig } = loadDistribution(ctx, accounts);
  const quoteMint = accounts.key('quote_mint');
  const vaultQuoteAccount = ata(accounts.key('creator_vault'), quoteMint, accounts.key('quote_token_program'));
  expectAddress(accounts.key('creator_vault_quote_token_account'), vaultQuoteAccount, 'creator_vault_quote_token_account');
  // A SOL curve stores the zero key as its quote; clients name it by the native mint.
  const curveQuote = curve.quoteMint.equals(PublicKey.default) ? NATIVE_MINT : curve.quoteMint;
  if (!quoteMint.equals(curveQuote)) throw pumpError('UnsupportedQuoteMint', `the curve is quoted in ${curveQuote.toBase58()}`);
  if (!curveQuote.equals(NATIVE_MINT)) throw pumpError('UnsupportedQuoteMint', 'the localnet emulates SOL curves only');

  if (!sameShareholders(sharingConfig, accounts.remaining)) throw pumpError('ShareholdersAndRemainingAccountsMismatch');
  payShareholders(ctx, accounts, curve, sharingConfig);
}

/**
 * `get_minimum_distributable_fee`, a view: what the creator vault must hold above its rent for
 * `distribute_creator_fees` to pay every shareholder, what it holds, and whether that suffices. A share only fails
 * when it would leave its recipient below rent exemption, so the minimum is the least vault balance whose every
 * share lifts every underfunded recipient to its rent, and at least one lamport (nothing to pay is no distribution).
 * The answer is the instruction's return data (anchor's `returns`), and also logged as the event of the same name.
 */
export function getMinimumDistributableFee(ctx: InstructionContext): void {
  const accounts = bindAccounts(ctx, 'get_minimum_distributable_fee');
  const { sharingConfig } = loadSharing(ctx, accounts);
  if (!sameShareholders(sharingConfig, accounts.remaining)) throw pumpError('ShareholdersAndRemainingAccountsMismatch');
  let minimumRequired = 1n;
  for (const holder of sharingConfig.shareholders) {
    const recipient = ctx.account(holder.address);
    const deficit = ctx.rentExempt(recipient?.data.length ?? 0) - (recipient?.lamports ?? 0n);
    if (deficit <= 0n || holder.shareBps === 0) continue;
    const needed = (deficit * BPS + BigInt(holder.shareBps) - 1n) / BigInt(holder.shareBps);
    if (needed > minimumRequired) minimumRequired = needed;
  }
  const distributableFees = vaultBalance(ctx, accounts.key('creator_vault'));
  const answer = { minimumRequired, distributableFees, canDistribute: distributableFees >= minimumRequired };
  ctx.setReturnData(encodeType('MinimumDistributableFeeEvent', answer));
  emitEvent(ctx, 'MinimumDistributableFeeEvent', answer);
}

function loadDistribution(ctx: InstructionContext, accounts: BoundAccounts): { curve: BondingCurve; sharingConfig: SharingConfig } {
  expectAddress(accounts.key('event_authority'), EVENT_AUTHORITY, 'event_authority');
  return loadSharing(ctx, accounts);
}

function loadSharing(ctx: InstructionContext, accounts: BoundAccounts): { curve: BondingCurve; sharingConfig: SharingConfig } {
  const mint = accounts.key('mint');
  const bondingCurve = accounts.key('bonding_curve');
  const sharingConfigAddress = accounts.key('sharing_config');
  expectAddress(bondingCurve, bondingCurvePda(mint), 'bonding_curve');
  expectAddress(sharingConfigAddress, sharingConfigPda(mint), 'sharing_config');
  const curve = decodeBondingCurve(programAccount(ctx, bondingCurve, PUMP_PROGRAM_ID, 'BondingCurve').data);
  const sharingConfig = decodeSharingConfig(programAccount(ctx, sharingConfigAddress, PUMP_FEES_PROGRAM_ID, 'SharingConfig').data);
  if (!sharingConfig.mint.equals(mint)) throw anchorError('ConstraintHasOne', 'sharing_config.mint must be mint');
  expectAddress(accounts.key('creator_vault'), creatorVaultPda(curve.creator), 'creator_vault');
  if (sharingConfig.status !== 'Active') throw pumpError('SharingConfigNotActive');
  if (!curve.creator.equals(sharingConfigAddress)) throw pumpError('BondingCurveAndSharingConfigCreatorMismatch');
  return { curve, sharingConfig };
}

const sameShareholders = (sharingConfig: SharingConfig, recipients: readonly InstructionAccount[]): boolean =>
  recipients.length === sharingConfig.shareholders.length &&
  sharingConfig.shareholders.every((holder, i) => holder.address.equals(recipients[i].pubkey));

function payShareholders(ctx: InstructionContext, accounts: BoundAccounts, curve: BondingCurve, sharingConfig: SharingConfig): void {
  const vault = accounts.key('creator_vault');
  const distributable = vaultBalance(ctx, vault);
  let distributed = 0n;
  for (const holder of sharingConfig.shareholders) {
    const share = (distributable * BigInt(holder.shareBps)) / BPS;
    const recipient = ctx.account(holder.address);
    if (recipient?.executable) throw pumpError('UnableToDistributeCreatorFeesToExecutableRecipient');
    if (share > 0n && (recipient?.lamports ?? 0n) + share < ctx.rentExempt(recipient?.data.length ?? 0)) {
      throw pumpError('UnableToDistributeCreatorFeesToUninitializedAccount');
    }
    payFromVault(ctx, vault, holder.address, share);
    distributed += share;
  }

  emitEvent(ctx, 'DistributeCreatorFeesEvent', {
    timestamp: ctx.clock.unixTimestamp,
    mint: accounts.key('mint'),
    bondingCurve: accounts.key('bonding_curve'),
    sharingConfig: accounts.key('sharing_config'),
    admin: sharingConfig.admin,
    shareholders: sharingConfig.shareholders,
    distributed,
    quoteMint: curve.quoteMint,
  });
}

/**
 * Opts a curve into fee sharing: pump-fees calls this right after it creates the coin's SharingConfig, and from
 * then on creator fees accrue to the config's creator vault. Only an initialized config of this mint qualifies,
 * and only pump-fees can create one; pointing a curve at its config again changes nothing.
 */
export function migrateBondingCurveCreator(ctx: InstructionContext): void {
  const accounts = bindAccounts(ctx, 'migrate_bonding_curve_creator');
  const mint = accounts.key('mint');
  const bondingCurve = accounts.key('bonding_curve');
  const sharingConfigAddress = accounts.key('sharing_config');
  expectAddress(bondingCurve, bondingCurvePda(mint), 'bonding_curve');
  expectAddress(sharingConfigAddress, sharingConfigPda(mint), 'sharing_config');
  expectAddress(accounts.key('event_authority'), EVENT_AUTHORITY, 'event_authority');
  const curveAccount = programAccount(ctx, bondingCurve, PUMP_PROGRAM_ID, 'BondingCurve');
  const curve = decodeBondingCurve(curveAccount.data);
  const sharingConfig = decodeSharingConfig(programAccount(ctx, sharingConfigAddress, PUMP_FEES_PROGRAM_ID, 'SharingConfig').data);
  if (!sharingConfig.mint.equals(mint)) throw anchorError('ConstraintHasOne', 'sharing_config.mint must be mint');

  ctx.writeOwned(bondingCurve, encodeBondingCurve({ ...curve, creator: sharingConfigAddress }, curveAccount.data.length));
  emitEvent(ctx, 'MigrateBondingCurveCreatorEvent', {
    timestamp: ctx.clock.unixTimestamp,
    mint,
    bondingCurve,
    sharingConfig: sharingConfigAddress,
    oldCreator: curve.creator,
    newCreator: sharingConfigAddress,
  });
}
