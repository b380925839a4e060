import BN from 'bn.js';
import { PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createBurnInstruction,
  createSyncNativeInstruction,
  createTransferCheckedInstruction,
  NATIVE_MINT,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { OFFLINE_PUMP_AMM_PROGRAM } from '@pump-fun/pump-swap-sdk';
import type { InstructionContext } from '../../../runtime/program';
import { anchorError } from '../../../runtime/program';
import { bindAccounts, BoundAccounts, expectAddress, lamportsOf, mintInfo, programAccount, tokenBalance } from '../accounts';
import {
  AMM_EVENT_AUTHORITY,
  AMM_GLOBAL_CONFIG,
  ASSOCIATED_TOKEN_PROGRAM_ID,
  ata,
  bondingCurvePda,
  canonicalPoolPda,
  EVENT_AUTHORITY,
  GLOBAL,
  lpMintPda,
  poolAuthorityPda,
  PUMP_AMM_PROGRAM_ID,
  PUMP_PROGRAM_ID,
} from '../addresses';
import { pumpError } from '../errors';
import { emitEvent } from '../events';
import { BondingCurve, decodeBondingCurve, decodeGlobal, encodeBondingCurve } from '../state';

/**
 * Moves a complete curve into its canonical PumpSwap pool: the curve's tokens and its SOL (less Global's
 * pool_migration_fee) go in through PumpSwap `create_pool`, signed by the mint's pool-authority PDA, and the
 * LP tokens that come back are burnt. The migration fee funds the pool authority's rent for the pool, its
 * LP mint and token accounts; what it does not spend goes to Global's withdraw authority. The caller (`user`)
 * pays for the pool authority's own two token accounts.
 */
export function migrate(ctx: InstructionContext): void {
  const accounts = bindAccounts(ctx, 'migrate');
  expectAddress(accounts.key('global'), GLOBAL, 'global');
  const global = decodeGlobal(programAccount(ctx, GLOBAL, PUMP_PROGRAM_ID, 'Global').data);
  if (!accounts.key('withdraw_authority').equals(global.withdrawAuthority)) throw anchorError('ConstraintHasOne', 'withdraw_authority must be Global\'s');
  const mint = accounts.key('mint');
  const bondingCurve = accounts.key('bonding_curve');
  expectAddress(bondingCurve, bondingCurvePda(mint), 'bonding_curve');
  const curveAccount = programAccount(ctx, bondingCurve, PUMP_PROGRAM_ID, 'BondingCurve');
  const curve = decodeBondingCurve(curveAccount.data);
  const base = mintInfo(ctx, mint);
  const poolAuthority = poolAuthorityPda(mint);
  const pool = canonicalPoolPda(mint);
  const lpMint = lpMintPda(pool);
  checkMigrateAccounts(accounts, { bondingCurve, mint, baseProgram: base.tokenProgram, poolAuthority, pool, lpMint });

  if (!global.enableMigrate) throw pumpError('DisabledMigrate');
  if (!curve.complete) throw pumpError('BondingCurveNotComplete');
  if (curve.virtualTokenReserves === 0n) throw pumpError('BondingCurveAlreadyMigrated');
  if (curve.realQuoteReserves <= global.poolMigrationFee) throw pumpError('PoolMigrationFeeShouldBeLessThanFinalRealSolReserves');
  const quoteAmount = curve.realQuoteReserves - global.poolMigrationFee;
  const user = accounts.key('user');
  const poolAuthorityBase = accounts.key('pool_authority_mint_account');
  const poolAuthorityQuote = accounts.key('pool_authority_wsol_account');
  const associatedBondingCurve = accounts.key('associated_bonding_curve');
  const baseAmount = tokenBalance(ctx, associatedBondingCurve);

  ctx.invoke(createAssociatedTokenAccountIdempotentInstruction(user, poolAuthorityBase, poolAuthority, mint, base.tokenProgram));
  ctx.invoke(createAssociatedTokenAccountIdempotentInstruction(user, poolAuthorityQuote, poolAuthority, NATIVE_MINT, TOKEN_PROGRAM_ID));
  ctx.invokeSigned(
    createTransferCheckedInstruction(associatedBondingCurve, mint, poolAuthorityBase, bondingCurve, baseAmount, base.decimals, [], base.tokenProgram),
    [bondingCurve],
  );
  ctx.transferOwnedLamports(bondingCurve, poolAuthorityQuote, quoteAmount);
  ctx.invoke(createSyncNativeInstruction(poolAuthorityQuote, TOKEN_PROGRAM_ID));
  ctx.transferOwnedLamports(bondingCurve, poolAuthority, global.poolMigrationFee);

  ctx.invokeEmulated(createPoolInstruction(accounts, curve, { mint, baseProgram: base.tokenProgram, poolAuthority, pool, lpMint, baseAmount, quoteAmount }), [poolAuthority]);

  const userPoolTokenAccount = accounts.key('user_pool_token_account');
  const lpTokens = tokenBalance(ctx, userPoolTokenAccount);
  if (lpTokens > 0n) {
    ctx.invokeSigned(createBurnInstruction(userPoolTokenAccount, lpMint, poolAuthority, lpTokens, [], TOKEN_2022_PROGRAM_ID), [poolAuthority]);
  }
  const unspent = lamportsOf(ctx, poolAuthority);
  if (unspent > 0n) {
    ctx.invokeSigned(SystemProgram.transfer({ fromPubkey: poolAuthority, toPubkey: global.withdrawAuthority, lamports: unspent }), [poolAuthority]);
  }

  const migrated: BondingCurve = { ...curve, virtualTokenReserves: 0n, virtualQuoteReserves: 0n, realTokenReserves: 0n, realQuoteReserves: 0n };
  ctx.writeOwned(bondingCurve, encodeBondingCurve(migrated, curveAccount.data.length));
  emitEvent(ctx, 'CompletePumpAmmMigrationEvent', {
    user,
    mint,
    mintAmount: baseAmount,
    solAmount: quoteAmount,
    poolMigrationFee: global.poolMigrationFee,
    bondingCurve,
    timestamp: ctx.clock.unixTimestamp,
    pool,
    quoteMint: curve.quoteMint,
  });
}

interface MigrationAddresses {
  bondingCurve: PublicKey;
  mint: PublicKey;
  baseProgram: PublicKey;
  poolAuthority: PublicKey;
  pool: PublicKey;
  lpMint: PublicKey;
}

function checkMigrateAccounts(accounts: BoundAccounts, a: MigrationAddresses): void {
  expectAddress(accounts.key('associated_bonding_curve'), ata(a.bondingCurve, a.mint, a.baseProgram), 'associated_bonding_curve');
  expectAddress(accounts.key('pool_authority'), a.poolAuthority, 'pool_authority');
  expectAddress(accounts.key('pool_authority_mint_account'), ata(a.poolAuthority, a.mint, a.baseProgram), 'pool_authority_mint_account');
  expectAddress(accounts.key('pool_authority_wsol_account'), ata(a.poolAuthority, NATIVE_MINT, TOKEN_PROGRAM_ID), 'pool_authority_wsol_account');
  expectAddress(accounts.key('pool'), a.pool, 'pool');
  expectAddress(accounts.key('lp_mint'), a.lpMint, 'lp_mint');
  expectAddress(accounts.key('user_pool_token_account'), ata(a.poolAuthority, a.lpMint, TOKEN_2022_PROGRAM_ID), 'user_pool_token_account');
  expectAddress(accounts.key('pool_base_token_account'), ata(a.pool, a.mint, a.baseProgram), 'pool_base_token_account');
  expectAddress(accounts.key('pool_quote_token_account'), ata(a.pool, NATIVE_MINT, TOKEN_PROGRAM_ID), 'pool_quote_token_account');
  expectAddress(accounts.key('amm_global_config'), AMM_GLOBAL_CONFIG, 'amm_global_config');
  expectAddress(accounts.key('pump_amm_event_authority'), AMM_EVENT_AUTHORITY, 'pump_amm_event_authority');
  expectAddress(accounts.key('event_authority'), EVENT_AUTHORITY, 'event_authority');
}

/** PumpSwap `create_pool` as the real migrate issues it: the pool authority creates pool index 0 for the coin's creator. */
function createPoolInstruction(
  accounts: BoundAccounts,
  curve: BondingCurve,
  p: { mint: PublicKey; baseProgram: PublicKey; poolAuthority: PublicKey; pool: PublicKey; lpMint: PublicKey; baseAmount: bigint; quoteAmount: bigint },
): TransactionInstruction {
  const data = OFFLINE_PUMP_AMM_PROGRAM.coder.instruction.encode('createPool', {
    index: 0,
    baseAmountIn: new BN(p.baseAmount.toString()),
    quoteAmountIn: new BN(p.quoteAmount.toString()),
    coinCreator: curve.creator,
    isMayhemMode: curve.isMayhemMode,
    isCashbackCoin: { 0: curve.isCashbackCoin },
    creatorFeeBps: { 0: new BN(curve.creatorFeeBps.toString()) },
    canEditCreatorFee: { 0: curve.canEditCreatorFee },
  });
  const meta = (pubkey: PublicKey, isWritable = false, isSigner = false) => ({ pubkey, isWritable, isSigner });
  return new TransactionInstruction({
    programId: PUMP_AMM_PROGRAM_ID,
    data,
    keys: [
      meta(p.pool, true),
      meta(AMM_GLOBAL_CONFIG),
      meta(p.poolAuthority, true, true),
      meta(p.mint),
      meta(NATIVE_MINT),
      meta(p.lpMint, true),
      meta(accounts.key('pool_authority_mint_account'), true),
      meta(accounts.key('pool_authority_wsol_account'), true),
      meta(accounts.key('user_pool_token_account'), true),
      meta(accounts.key('pool_base_token_account'), true),
      meta(accounts.key('pool_quote_token_account'), true),
      meta(SystemProgram.programId),
      meta(TOKEN_2022_PROGRAM_ID),
      meta(p.baseProgram),
      meta(TOKEN_PROGRAM_ID),
      meta(ASSOCIATED_TOKEN_PROGRAM_ID),
      meta(AMM_EVENT_AUTHORITY),
      meta(PUMP_AMM_PROGRAM_ID),
      // The boost vault accounts the SDK appends to migrate travel on to create_pool.
      ...accounts.remaining.map((a) => meta(a.pubkey, a.isWritable)),
    ],
  });
}
