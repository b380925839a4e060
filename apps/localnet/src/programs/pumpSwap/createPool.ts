import { PublicKey, SystemProgram } from '@solana/web3.js';
import {
  MINT_SIZE,
  TOKEN_2022_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  createTransferCheckedInstruction,
} from '@solana/spl-token';
import { InstructionContext } from '../../runtime/program';
import { namedAccounts, readMint, requireAddress, requireSigner, requireWritable } from './accounts';
import { ammError } from './errors';
import { MINIMUM_LIQUIDITY, initialLiquidity } from './math';
import { readGlobalConfig } from './swap';
import { DISABLE, EVENT_AUTHORITY, Pool, encodeEvent, encodePool, isPumpPool, lpMintAddress, poolAddress } from './state';
import { associatedTokenAddress } from '../../runtime/pda';

export const CREATE_POOL_ACCOUNTS = [
  'pool', 'globalConfig', 'creator', 'baseMint', 'quoteMint', 'lpMint', 'userBaseTokenAccount', 'userQuoteTokenAccount',
  'userPoolTokenAccount', 'poolBaseTokenAccount', 'poolQuoteTokenAccount', 'systemProgram', 'token2022Program',
  'baseTokenProgram', 'quoteTokenProgram', 'associatedTokenProgram', 'eventAuthority', 'program',
] as const;

export interface CreatePoolArgs {
  index: number;
  baseAmountIn: bigint;
  quoteAmountIn: bigint;
  coinCreator: PublicKey;
  isMayhemMode: boolean;
  isCashbackCoin: boolean;
  creatorFeeBps: bigint;
  canEditCreatorFee: boolean;
}

/** LP tokens carry 9 decimals, like the program's LP mints on mainnet. */
export const LP_DECIMALS = 9;

/** The pool a `create_pool` with these amounts writes; also what `seedPool` writes at genesis. */
export function newPool(args: CreatePoolArgs, creator: PublicKey, baseMint: PublicKey, quoteMint: PublicKey, baseProgram: PublicKey, quoteProgram: PublicKey): { address: PublicKey; pool: Pool } {
  const [address, bump] = poolAddress(args.index, creator, baseMint, quoteMint);
  const pumpPool = isPumpPool(baseMint, creator);
  return {
    address,
    pool: {
      poolBump: bump,
      index: args.index,
      creator,
      baseMint,
      quoteMint,
      lpMint: lpMintAddress(address),
      poolBaseTokenAccount: associatedTokenAddress(baseMint, address, baseProgram),
      poolQuoteTokenAccount: associatedTokenAddress(quoteMint, address, quoteProgram),
      lpSupply: initialLiquidity(args.baseAmountIn, args.quoteAmountIn),
      coinCreator: args.coinCreator,
      isMayhemMode: args.isMayhemMode,
      isCashbackCoin: pumpPool && args.isCashbackCoin,
      virtualQuoteReserves: 0n,
      creatorFeeBps: args.creatorFeeBps,
      canEditCreatorFee: args.canEditCreatorFee,
    },
  };
}

export function createPool(ctx: InstructionContext, args: CreatePoolArgs): void {
  const a = namedAccounts(ctx, CREATE_POOL_ACCOUNTS);
  requireSigner(a.creator);
  for (const w of [a.pool, a.creator, a.lpMint, a.userBaseTokenAccount, a.userQuoteTokenAccount, a.userPoolTokenAccount, a.poolBaseTokenAccount, a.poolQuoteTokenAccount]) requireWritable(w);
  const global = readGlobalConfig(ctx, a.globalConfig);
  if (global.disableFlags & DISABLE.createPool) throw ammError('DisabledCreatePool');
  const baseMint = a.baseMint.pubkey;
  const quoteMint = a.quoteMint.pubkey;
  if (baseMint.equals(quoteMint)) throw ammError('SameMint');
  if (args.baseAmountIn === 0n) throw ammError('ZeroBaseAmount');
  if (args.quoteAmountIn === 0n) throw ammError('ZeroQuoteAmount');
  const base = readMint(ctx, baseMint);
  const quote = readMint(ctx, quoteMint);
  requireAddress(a.baseTokenProgram, base.program);
  requireAddress(a.quoteTokenProgram, quote.program);
  requireAddress(a.token2022Program, TOKEN_2022_PROGRAM_ID);
  requireAddress(a.eventAuthority, EVENT_AUTHORITY, 'ConstraintSeeds');
  const creator = a.creator.pubkey;
  const pumpPool = isPumpPool(baseMint, creator);
  if (!pumpPool && (!args.coinCreator.equals(PublicKey.default) || args.creatorFeeBps !== 0n || args.canEditCreatorFee)) throw ammError('OnlyCanonicalPumpPoolsCanHaveCoinCreator');

  const { address, pool } = newPool(args, creator, baseMint, quoteMint, base.program, quote.program);
  requireAddress(a.pool, address, 'ConstraintSeeds');
  requireAddress(a.lpMint, pool.lpMint, 'ConstraintSeeds');
  requireAddress(a.poolBaseTokenAccount, pool.poolBaseTokenAccount, 'ConstraintSeeds');
  requireAddress(a.poolQuoteTokenAccount, pool.poolQuoteTokenAccount, 'ConstraintSeeds');
  const userPoolTokenAccount = associatedTokenAddress(pool.lpMint, creator, TOKEN_2022_PROGRAM_ID);
  requireAddress(a.userPoolTokenAccount, userPoolTokenAccount, 'ConstraintSeeds');
  if (pool.lpSupply <= MINIMUM_LIQUIDITY) throw ammError('ZeroBaseAmount', 'initial liquidity does not exceed the locked minimum');
  const lpOut = pool.lpSupply - MINIMUM_LIQUIDITY;

  ctx.createOwned(creator, address, encodePool(pool));
  ctx.invokeSigned(
    SystemProgram.createAccount({ fromPubkey: creator, newAccountPubkey: pool.lpMint, lamports: Number(ctx.rentExempt(MINT_SIZE)), space: MINT_SIZE, programId: TOKEN_2022_PROGRAM_ID }),
    [pool.lpMint],
  );
  ctx.invoke(createInitializeMint2Instruction(pool.lpMint, LP_DECIMALS, address, null, TOKEN_2022_PROGRAM_ID));
  for (const [ata, mint, program] of [
    [pool.poolBaseTokenAccount, baseMint, base.program],
    [pool.poolQuoteTokenAccount, quoteMint, quote.program],
  ] as const) {
    if (!ctx.account(ata)) ctx.invoke(createAssociatedTokenAccountIdempotentInstruction(creator, ata, address, mint, program));
  }
  ctx.invoke(createAssociatedTokenAccountIdempotentInstruction(creator, userPoolTokenAccount, creator, pool.lpMint, TOKEN_2022_PROGRAM_ID));

  ctx.invoke(createTransferCheckedInstruction(a.userBaseTokenAccount.pubkey, baseMint, pool.poolBaseTokenAccount, creator, args.baseAmountIn, base.decimals, [], base.program));
  ctx.invoke(createTransferCheckedInstruction(a.userQuoteTokenAccount.pubkey, quoteMint, pool.poolQuoteTokenAccount, creator, args.quoteAmountIn, quote.decimals, [], quote.program));
  ctx.invokeSigned(createMintToInstruction(pool.lpMint, userPoolTokenAccount, address, lpOut, [], TOKEN_2022_PROGRAM_ID), [address]);

  ctx.emitData(
    encodeEvent('CreatePoolEvent', {
      timestamp: ctx.clock.unixTimestamp,
      index: args.index,
      creator,
      baseMint,
      quoteMint,
      baseMintDecimals: base.decimals,
      quoteMintDecimals: quote.decimals,
      baseAmountIn: args.baseAmountIn,
      quoteAmountIn: args.quoteAmountIn,
      poolBaseAmount: args.baseAmountIn,
      poolQuoteAmount: args.quoteAmountIn,
      minimumLiquidity: MINIMUM_LIQUIDITY,
      initialLiquidity: pool.lpSupply,
      lpTokenAmountOut: lpOut,
      poolBump: pool.poolBump,
      pool: address,
      lpMint: pool.lpMint,
      userBaseTokenAccount: a.userBaseTokenAccount.pubkey,
      userQuoteTokenAccount: a.userQuoteTokenAccount.pubkey,
      coinCreator: args.coinCreator,
      isMayhemMode: args.isMayhemMode,
      creatorFeeBps: args.creatorFeeBps,
      canEditCreatorFee: args.canEditCreatorFee,
    }),
  );
}
