import { PublicKey, SystemProgram } from '@solana/web3.js';
import {
  AuthorityType,
  createAssociatedTokenAccountInstruction,
  createInitializeInstruction,
  createInitializeMetadataPointerInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  createSetAuthorityInstruction,
  ExtensionType,
  getMintLen,
  NATIVE_MINT,
  TOKEN_2022_PROGRAM_ID,
} from '@solana/spl-token';
import type { InstructionContext } from '../../../runtime/program';
import { anchorError } from '../../../runtime/program';
import { bindAccounts, expectAddress, programAccount } from '../accounts';
import { ata, bondingCurvePda, EVENT_AUTHORITY, GLOBAL, holderRewardsPda, MINT_AUTHORITY, PUMP_PROGRAM_ID } from '../addresses';
import { decodeInstructionArgs } from '../codec';
import { pumpError } from '../errors';
import { emitEvent } from '../events';
import { BondingCurve, BONDING_CURVE_SIZE, decodeGlobal, encodeBondingCurve } from '../state';

const TOKEN_DECIMALS = 6;
const MAX_NAME_BYTES = 32;
const MAX_SYMBOL_BYTES = 13;
const MAX_URI_BYTES = 200;

interface CreateV2Args {
  name: string;
  symbol: string;
  uri: string;
  creator: PublicKey;
  isMayhemMode: boolean;
  isCashbackEnabled: [boolean];
  creatorFeeBps: [bigint];
  isHolderReward: [boolean];
}

/**
 * A Token-2022 coin with its metadata in the mint (MetadataPointer + TokenMetadata), its whole supply in the
 * curve's associated token account, and no mint authority left. Only SOL curves: a token quote selected
 * through the remaining accounts is refused as unsupported.
 */
export function createV2(ctx: InstructionContext): void {
  const args = decodeInstructionArgs<CreateV2Args>('create_v2', ctx.data.subarray(8));
  if (!args) throw anchorError('InstructionDidNotDeserialize');
  const accounts = bindAccounts(ctx, 'create_v2');
  const mint = accounts.key('mint');
  const user = accounts.key('user');
  const bondingCurve = accounts.key('bonding_curve');
  const associatedBondingCurve = accounts.key('associated_bonding_curve');
  expectAddress(accounts.key('mint_authority'), MINT_AUTHORITY, 'mint_authority');
  expectAddress(bondingCurve, bondingCurvePda(mint), 'bonding_curve');
  expectAddress(associatedBondingCurve, ata(bondingCurve, mint, TOKEN_2022_PROGRAM_ID), 'associated_bonding_curve');
  expectAddress(accounts.key('global'), GLOBAL, 'global');
  expectAddress(accounts.key('event_authority'), EVENT_AUTHORITY, 'event_authority');
  const global = decodeGlobal(programAccount(ctx, GLOBAL, PUMP_PROGRAM_ID, 'Global').data);

  if (!global.createV2Enabled) throw pumpError('CreateV2Disabled');
  if (Buffer.byteLength(args.name) > MAX_NAME_BYTES) throw pumpError('NameTooLong');
  if (Buffer.byteLength(args.symbol) > MAX_SYMBOL_BYTES) throw pumpError('SymbolTooLong');
  if (Buffer.byteLength(args.uri) > MAX_URI_BYTES) throw pumpError('UriTooLong');
  if (args.creator.equals(PublicKey.default)) throw pumpError('CreatorShouldNotBeZero');
  if (args.isCashbackEnabled[0]) throw pumpError('CashbackDeprecated');
  if (args.isHolderReward[0] && !global.isHolderRewardEnabled) throw pumpError('HolderRewardDisabled');
  if (args.isMayhemMode && !global.mayhemModeEnabled) throw pumpError('MayhemModeDisabled');
  const quoteMint = accounts.remaining[0]?.pubkey;
  if (quoteMint && !quoteMint.equals(NATIVE_MINT) && !quoteMint.equals(PublicKey.default)) {
    throw pumpError('UnsupportedQuoteMint', 'the localnet emulates SOL curves only');
  }

  createMint(ctx, user, mint, args);

  const creator = args.isHolderReward[0] ? holderRewardsPda(mint) : args.creator;
  const curve: BondingCurve = {
    virtualTokenReserves: global.initialVirtualTokenReserves,
    virtualQuoteReserves: global.initialVirtualSolReserves,
    realTokenReserves: global.initialRealTokenReserves,
    realQuoteReserves: 0n,
    tokenTotalSupply: global.tokenTotalSupply,
    complete: false,
    creator,
    isMayhemMode: args.isMayhemMode,
    isCashbackCoin: false,
    quoteMint: PublicKey.default,
    // A creator rate only applies to quote-control mints; on SOL the argument is ignored.
    creatorFeeBps: 0n,
    canEditCreatorFee: false,
    isHolderReward: args.isHolderReward[0],
  };
  ctx.createOwned(user, bondingCurve, encodeBondingCurve(curve, BONDING_CURVE_SIZE));

  ctx.invoke(createAssociatedTokenAccountInstruction(user, associatedBondingCurve, bondingCurve, mint, TOKEN_2022_PROGRAM_ID));
  ctx.invokeSigned(createMintToInstruction(mint, associatedBondingCurve, MINT_AUTHORITY, global.tokenTotalSupply, [], TOKEN_2022_PROGRAM_ID), [MINT_AUTHORITY]);
  ctx.invokeSigned(createSetAuthorityInstruction(mint, MINT_AUTHORITY, AuthorityType.MintTokens, null, [], TOKEN_2022_PROGRAM_ID), [MINT_AUTHORITY]);

  emitEvent(ctx, 'CreateEvent', {
    name: args.name,
    symbol: args.symbol,
    uri: args.uri,
    mint,
    bondingCurve,
    user,
    creator,
    timestamp: ctx.clock.unixTimestamp,
    virtualTokenReserves: curve.virtualTokenReserves,
    virtualSolReserves: curve.virtualQuoteReserves,
    realTokenReserves: curve.realTokenReserves,
    tokenTotalSupply: curve.tokenTotalSupply,
    tokenProgram: TOKEN_2022_PROGRAM_ID,
    isMayhemMode: curve.isMayhemMode,
    isCashbackEnabled: false,
    quoteMint: curve.quoteMint,
    virtualQuoteReserves: curve.virtualQuoteReserves,
    creatorFeeBps: curve.creatorFeeBps,
    isHolderReward: curve.isHolderReward,
  });
}

function createMint(ctx: InstructionContext, user: PublicKey, mint: PublicKey, args: CreateV2Args): void {
  const mintSize = getMintLen([ExtensionType.MetadataPointer]);
  // TokenMetadata is a TLV entry the metadata initialize appends by realloc, so the mint is funded for its final
  // length up front. That length is not simply the sum: when it would equal the Multisig size (355 bytes),
  // Token-2022 pads the account by one extension-type width so it can never be read as a multisig; getMintLen
  // with the variable-length entry applies the same rule.
  const metadataLen = 32 + 32 + [args.name, args.symbol, args.uri].reduce((n, s) => n + 4 + Buffer.byteLength(s), 0) + 4;
  const finalSize = getMintLen([ExtensionType.MetadataPointer], { [ExtensionType.TokenMetadata]: metadataLen });
  ctx.invoke(
    SystemProgram.createAccount({
      fromPubkey: user,
      newAccountPubkey: mint,
      space: mintSize,
      lamports: Number(ctx.rentExempt(finalSize)),
      programId: TOKEN_2022_PROGRAM_ID,
    }),
  );
  ctx.invoke(createInitializeMetadataPointerInstruction(mint, null, mint, TOKEN_2022_PROGRAM_ID));
  ctx.invoke(createInitializeMint2Instruction(mint, TOKEN_DECIMALS, MINT_AUTHORITY, null, TOKEN_2022_PROGRAM_ID));
  ctx.invokeSigned(
    createInitializeInstruction({
      programId: TOKEN_2022_PROGRAM_ID,
      metadata: mint,
      updateAuthority: MINT_AUTHORITY,
      mint,
      mintAuthority: MINT_AUTHORITY,
      name: args.name,
      symbol: args.symbol,
      uri: args.uri,
    }),
    [MINT_AUTHORITY],
  );
}
