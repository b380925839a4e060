import { PublicKey } from '@solana/web3.js';
import { AccountLayout, ACCOUNT_SIZE, MintLayout, MINT_SIZE } from '@solana/spl-token';
import { AccountState, InstructionAccount, InstructionContext, ProgramError, anchorError } from '../../runtime/program';
import { instruction } from './codec';
import { isAccount } from './state';

/** An instruction's accounts by their IDL names, checked the way anchor's account constraints check them. */
export class BoundAccounts {
  constructor(
    private readonly byName: ReadonlyMap<string, InstructionAccount>,
    readonly remaining: readonly InstructionAccount[],
  ) {}

  key(name: string): PublicKey {
    const account = this.byName.get(name);
    if (!account) throw new Error(`instruction has no account named ${name}`);
    return account.pubkey;
  }
}

export function bindAccounts(ctx: InstructionContext, ixName: string): BoundAccounts {
  const declared = instruction(ixName).accounts;
  if (ctx.accounts.length < declared.length) throw new ProgramError(3005, 'AccountNotEnoughKeys', 'Not enough account keys given to the instruction');
  const byName = new Map<string, InstructionAccount>();
  declared.forEach((spec, i) => {
    const account = ctx.accounts[i];
    if (spec.signer && !account.isSigner) throw new ProgramError(3010, 'AccountNotSigner', `${spec.name} must sign`);
    if (spec.writable && !account.isWritable) throw anchorError('ConstraintMut', `${spec.name} must be writable`);
    if (spec.address && !account.pubkey.equals(new PublicKey(spec.address))) throw anchorError('ConstraintAddress', `${spec.name} must be ${spec.address}`);
    byName.set(spec.name, account);
  });
  return new BoundAccounts(byName, ctx.accounts.slice(declared.length));
}

/** Anchor's `seeds = ...` check: the passed account must be the derived address. */
export function expectAddress(actual: PublicKey, expected: PublicKey, what: string): void {
  if (!actual.equals(expected)) throw anchorError('ConstraintSeeds', `${what} must be ${expected.toBase58()}`);
}

/** An initialized account of `owner` whose data is the IDL account `name`. */
export function programAccount(ctx: InstructionContext, pubkey: PublicKey, owner: PublicKey, name: string): AccountState {
  const account = ctx.account(pubkey);
  if (!account || account.data.length === 0) throw anchorError('AccountNotInitialized', `${name} ${pubkey.toBase58()} is not initialized`);
  if (!account.owner.equals(owner)) throw anchorError('AccountOwnedByWrongProgram', `${name} is owned by ${account.owner.toBase58()}`);
  if (!isAccount(name, account.data)) throw anchorError('AccountDiscriminatorMismatch', `${pubkey.toBase58()} is not a ${name}`);
  return account;
}

export interface MintInfo {
  tokenProgram: PublicKey;
  supply: bigint;
  decimals: number;
}

export function mintInfo(ctx: InstructionContext, mint: PublicKey): MintInfo {
  const account = ctx.account(mint);
  if (!account || account.data.length < MINT_SIZE) throw anchorError('AccountNotInitialized', `mint ${mint.toBase58()} is not initialized`);
  const decoded = MintLayout.decode(account.data.subarray(0, MINT_SIZE));
  return { tokenProgram: account.owner, supply: decoded.supply, decimals: decoded.decimals };
}

export function tokenBalance(ctx: InstructionContext, tokenAccount: PublicKey): bigint {
  const account = ctx.account(tokenAccount);
  if (!account || account.data.length < ACCOUNT_SIZE) return 0n;
  return AccountLayout.decode(account.data.subarray(0, ACCOUNT_SIZE)).amount;
}

export const lamportsOf = (ctx: InstructionContext, pubkey: PublicKey): bigint => ctx.account(pubkey)?.lamports ?? 0n;
