import { PublicKey } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { ANCHOR_ERRORS, InstructionAccount, InstructionContext, ProgramError, anchorError } from '../../runtime/program';

/** Reading an instruction's accounts the way anchor's `Accounts` derive does, with anchor's error numbers. */

export function namedAccounts<const N extends readonly string[]>(ctx: InstructionContext, names: N): Record<N[number], InstructionAccount> & { remaining: InstructionAccount[] } {
  if (ctx.accounts.length < names.length) throw new ProgramError(3005, 'AccountNotEnoughKeys', 'Not enough account keys given to the instruction');
  const out = {} as Record<string, InstructionAccount>;
  names.forEach((name, i) => (out[name] = ctx.accounts[i]!));
  return Object.assign(out as Record<N[number], InstructionAccount>, { remaining: ctx.accounts.slice(names.length) });
}

export function requireSigner(account: InstructionAccount): void {
  if (!account.isSigner) throw new ProgramError(3010, 'AccountNotSigner', `${account.pubkey.toBase58()} must sign`);
}

export function requireWritable(account: InstructionAccount): void {
  if (!account.isWritable) throw anchorError('ConstraintMut', `${account.pubkey.toBase58()} must be writable`);
}

export function requireAddress(account: InstructionAccount, expected: PublicKey, error: keyof typeof ANCHOR_ERRORS = 'ConstraintAddress'): void {
  if (!account.pubkey.equals(expected)) throw anchorError(error, `${account.pubkey.toBase58()} should be ${expected.toBase58()}`);
}

export function isTokenProgram(program: PublicKey): boolean {
  return program.equals(TOKEN_PROGRAM_ID) || program.equals(TOKEN_2022_PROGRAM_ID);
}

export interface TokenAccount {
  mint: PublicKey;
  owner: PublicKey;
  amount: bigint;
  program: PublicKey;
}

export function readTokenAccount(ctx: InstructionContext, address: PublicKey): TokenAccount | null {
  const state = ctx.account(address);
  if (!state || !isTokenProgram(state.owner) || state.data.length < 165) return null;
  return {
    mint: new PublicKey(state.data.subarray(0, 32)),
    owner: new PublicKey(state.data.subarray(32, 64)),
    amount: state.data.readBigUInt64LE(64),
    program: state.owner,
  };
}

export function tokenAmount(ctx: InstructionContext, address: PublicKey): bigint {
  return readTokenAccount(ctx, address)?.amount ?? 0n;
}

export interface Mint {
  supply: bigint;
  decimals: number;
  program: PublicKey;
}

export function readMint(ctx: InstructionContext, address: PublicKey): Mint {
  const state = ctx.account(address);
  if (!state || !isTokenProgram(state.owner) || state.data.length < 82) throw anchorError('AccountNotInitialized', `mint ${address.toBase58()} does not exist`);
  return { supply: state.data.readBigUInt64LE(36), decimals: state.data[44]!, program: state.owner };
}
