import { PublicKey, SystemProgram } from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  NATIVE_MINT,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createTransferCheckedInstruction,
} from '@solana/spl-token';
import { InstructionAccount, InstructionContext, ProgramError, anchorError } from '../../runtime/program';
import { decodeSharingConfig } from '../pumpFees/state';
import { namedAccounts, readMint, readTokenAccount, requireAddress, requireSigner, requireWritable } from './accounts';
import { ammError } from './errors';
import { readPool } from './swap';
import { EVENT_AUTHORITY, PUMP_FEES_PROGRAM_ID, coinCreatorVaultAuthority, encodeEvent, encodePool, pumpCreatorVault, sharingConfigAddress } from './state';
import { associatedTokenAddress } from '../../runtime/pda';

/** `collect_coin_creator_fee`: the whole vault ATA balance to a token account the coin creator owns. */
export function collectCoinCreatorFee(ctx: InstructionContext): void {
  const a = namedAccounts(ctx, ['quoteMint', 'quoteTokenProgram', 'coinCreator', 'coinCreatorVaultAuthority', 'coinCreatorVaultAta', 'coinCreatorTokenAccount', 'eventAuthority', 'program'] as const);
  requireAddress(a.eventAuthority, EVENT_AUTHORITY, 'ConstraintSeeds');
  requireWritable(a.coinCreatorVaultAta);
  requireWritable(a.coinCreatorTokenAccount);
  const coinCreator = a.coinCreator.pubkey;
  if (ctx.account(coinCreator)?.owner.equals(PUMP_FEES_PROGRAM_ID)) throw ammError('CreatorVaultMigratedToSharingConfig');
  const quote = readMint(ctx, a.quoteMint.pubkey);
  requireAddress(a.quoteTokenProgram, quote.program);
  const authority = coinCreatorVaultAuthority(coinCreator);
  requireAddress(a.coinCreatorVaultAuthority, authority, 'ConstraintSeeds');
  const vaultAta = associatedTokenAddress(a.quoteMint.pubkey, authority, quote.program);
  requireAddress(a.coinCreatorVaultAta, vaultAta, 'ConstraintSeeds');
  const destination = readTokenAccount(ctx, a.coinCreatorTokenAccount.pubkey);
  if (!destination) throw anchorError('AccountNotInitialized', 'coin creator token account does not exist');
  if (!destination.mint.equals(a.quoteMint.pubkey)) throw new ProgramError(2014, 'ConstraintTokenMint', 'coin creator token account holds another mint');
  if (!destination.owner.equals(coinCreator)) throw new ProgramError(2015, 'ConstraintTokenOwner', 'coin creator token account is not the coin creator\'s');
  const amount = readTokenAccount(ctx, vaultAta)?.amount ?? 0n;
  if (amount > 0n) {
    ctx.invokeSigned(createTransferCheckedInstruction(vaultAta, a.quoteMint.pubkey, a.coinCreatorTokenAccount.pubkey, authority, amount, quote.decimals, [], quote.program), [authority]);
  }
  ctx.emitData(
    encodeEvent('CollectCoinCreatorFeeEvent', {
      timestamp: ctx.clock.unixTimestamp,
      coinCreator,
      coinCreatorFee: amount,
      coinCreatorVaultAta: vaultAta,
      coinCreatorTokenAccount: a.coinCreatorTokenAccount.pubkey,
    }),
  );
}

/** `migrate_pool_coin_creator`: pump-fees' `create_fee_sharing_config` points a graduated pool's creator fees at the config. */
export function migratePoolCoinCreator(ctx: InstructionContext): void {
  const a = namedAccounts(ctx, ['pool', 'sharingConfig', 'eventAuthority', 'program'] as const);
  requireWritable(a.pool);
  requireAddress(a.eventAuthority, EVENT_AUTHORITY, 'ConstraintSeeds');
  const pool = readPool(ctx, a.pool);
  requireAddress(a.sharingConfig, sharingConfigAddress(pool.baseMint), 'ConstraintSeeds');
  const state = ctx.account(a.sharingConfig.pubkey);
  if (!state || !state.owner.equals(PUMP_FEES_PROGRAM_ID)) throw anchorError('AccountOwnedByWrongProgram', 'sharing config is not a pump-fees account');
  const config = decodeSharingConfig(state.data);
  if (!config) throw anchorError('AccountDiscriminatorMismatch');
  if (!config.mint.equals(pool.baseMint)) throw ammError('InvalidSharingConfigBaseMint');
  const old = pool.coinCreator;
  ctx.writeOwned(a.pool.pubkey, encodePool({ ...pool, coinCreator: a.sharingConfig.pubkey }, ctx.account(a.pool.pubkey)!.data.length));
  ctx.emitData(
    encodeEvent('MigratePoolCoinCreatorEvent', {
      timestamp: ctx.clock.unixTimestamp,
      baseMint: pool.baseMint,
      pool: a.pool.pubkey,
      sharingConfig: a.sharingConfig.pubkey,
      oldCoinCreator: old,
      newCoinCreator: a.sharingConfig.pubkey,
    }),
  );
}

interface SweepAccounts {
  payer: PublicKey | null;
  quoteMint: InstructionAccount;
  tokenProgram: InstructionAccount;
  coinCreator: InstructionAccount;
  coinCreatorVaultAuthority: InstructionAccount;
  coinCreatorVaultAta: InstructionAccount;
  pumpCreatorVault: InstructionAccount;
  pumpCreatorVaultAta: InstructionAccount | null;
  eventAuthority: InstructionAccount;
}

/**
 * Moves AMM creator fees into pump's creator vault of the same creator, where pump's `distribute_creator_fees`
 * pays them out. wSOL is unwrapped by closing the vault ATA into its authority and recreating it; balances below a
 * token account's rent are left for later, as the program does.
 */
function sweepToPump(ctx: InstructionContext, a: SweepAccounts): void {
  requireAddress(a.eventAuthority, EVENT_AUTHORITY, 'ConstraintSeeds');
  const coinCreator = a.coinCreator.pubkey;
  const quoteMint = a.quoteMint.pubkey;
  const quote = readMint(ctx, quoteMint);
  requireAddress(a.tokenProgram, quote.program);
  const authority = coinCreatorVaultAuthority(coinCreator);
  requireAddress(a.coinCreatorVaultAuthority, authority, 'ConstraintSeeds');
  const vaultAta = associatedTokenAddress(quoteMint, authority, quote.program);
  requireAddress(a.coinCreatorVaultAta, vaultAta, 'ConstraintSeeds');
  const pumpVault = pumpCreatorVault(coinCreator);
  requireAddress(a.pumpCreatorVault, pumpVault, 'ConstraintSeeds');
  const amount = readTokenAccount(ctx, vaultAta)?.amount ?? 0n;

  if (quoteMint.equals(NATIVE_MINT)) {
    if (amount < ctx.rentExempt(ACCOUNT_SIZE)) return;
    ctx.invokeSigned(createCloseAccountInstruction(vaultAta, authority, authority, [], TOKEN_PROGRAM_ID), [authority]);
    ctx.invokeSigned(createAssociatedTokenAccountIdempotentInstruction(authority, vaultAta, authority, NATIVE_MINT, TOKEN_PROGRAM_ID), [authority]);
    ctx.invokeSigned(SystemProgram.transfer({ fromPubkey: authority, toPubkey: pumpVault, lamports: amount }), [authority]);
    return;
  }
  if (amount === 0n || !a.pumpCreatorVaultAta) return;
  const pumpVaultAta = associatedTokenAddress(quoteMint, pumpVault, quote.program);
  requireAddress(a.pumpCreatorVaultAta, pumpVaultAta, 'ConstraintSeeds');
  if (!ctx.account(pumpVaultAta)) {
    if (!a.payer) throw anchorError('AccountNotInitialized', 'pump creator vault ATA does not exist');
    ctx.invoke(createAssociatedTokenAccountIdempotentInstruction(a.payer, pumpVaultAta, pumpVault, quoteMint, quote.program));
  }
  ctx.invokeSigned(createTransferCheckedInstruction(vaultAta, quoteMint, pumpVaultAta, authority, amount, quote.decimals, [], quote.program), [authority]);
}

/** `transfer_creator_fees_to_pump` (wSOL-quoted pump pools). */
export function transferCreatorFeesToPump(ctx: InstructionContext): void {
  const a = namedAccounts(ctx, ['wsolMint', 'tokenProgram', 'systemProgram', 'associatedTokenProgram', 'coinCreator', 'coinCreatorVaultAuthority', 'coinCreatorVaultAta', 'pumpCreatorVault', 'eventAuthority', 'program'] as const);
  requireAddress(a.wsolMint, NATIVE_MINT);
  sweepToPump(ctx, { ...a, payer: null, quoteMint: a.wsolMint, pumpCreatorVaultAta: null });
}

/** `transfer_creator_fees_to_pump_v2` (any quote). */
export function transferCreatorFeesToPumpV2(ctx: InstructionContext): void {
  const a = namedAccounts(ctx, ['payer', 'quoteMint', 'tokenProgram', 'systemProgram', 'associatedTokenProgram', 'coinCreator', 'coinCreatorVaultAuthority', 'coinCreatorVaultAta', 'pumpCreatorVault', 'pumpCreatorVaultAta', 'eventAuthority', 'program'] as const);
  requireSigner(a.payer);
  sweepToPump(ctx, { ...a, payer: a.payer.pubkey });
}
