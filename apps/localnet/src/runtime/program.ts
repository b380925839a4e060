import type { PublicKey, TransactionInstruction } from '@solana/web3.js';

/**
 * The contract between the executor and a natively emulated on-chain program.
 *
 * The pump, PumpSwap and pump-fees program binaries cannot be obtained here, so those programs run as
 * TypeScript at their real program ids. Everything else (System, SPL Token, Token-2022, ATA, Memo,
 * Compute Budget) runs inside LiteSVM. An emulated program follows the runtime's rules:
 * - it writes data and debits lamports only on accounts it owns (`writeOwned`, `createOwned`, `transferOwnedLamports`);
 * - it may credit lamports to any writable account of the instruction (the runtime allows that too);
 * - every token or SOL movement out of accounts it does not own goes through a real program by `invoke`,
 *   with PDA signatures granted only for addresses derived from its own program id (`invokeSigned`).
 */
export interface EmulatedProgram {
  readonly programId: PublicKey;
  readonly name: string;
  /** Runs one instruction. Throws a ProgramError (or any Error, reported as a generic failure) to fail the transaction. */
  execute(ctx: InstructionContext): void;
  /** Accounts this program needs at genesis (Global, FeeConfig, ...), written once when the chain is created. */
  genesis?(init: GenesisContext): void;
}

export interface AccountState {
  lamports: bigint;
  data: Buffer;
  owner: PublicKey;
  executable: boolean;
}

export interface InstructionAccount {
  pubkey: PublicKey;
  isSigner: boolean;
  isWritable: boolean;
}

export interface InstructionContext {
  readonly programId: PublicKey;
  readonly data: Buffer;
  readonly accounts: readonly InstructionAccount[];
  /** Index of this instruction within the transaction (for error reporting). */
  readonly index: number;
  readonly clock: { slot: bigint; unixTimestamp: bigint };

  /** The current state of an account (null when it does not exist or holds no lamports). */
  account(pubkey: PublicKey): AccountState | null;
  /** Lamports needed for rent exemption of `dataLength` bytes. */
  rentExempt(dataLength: number): bigint;

  /** Overwrites data (and optionally lamports) of an account this program owns. Throws if it does not own it. */
  writeOwned(pubkey: PublicKey, data: Buffer, lamports?: bigint): void;
  /**
   * Creates a program-owned account at an address derived from this program (the real program does it with a
   * system create_account CPI signed by the PDA). Rent comes from `payer`, a signer of the transaction, through
   * the System program. The address must not hold data yet.
   */
  createOwned(payer: PublicKey, pubkey: PublicKey, data: Buffer): void;
  /** Moves lamports out of an account this program owns into any writable account of the instruction. */
  transferOwnedLamports(from: PublicKey, to: PublicKey, lamports: bigint): void;

  /** Cross-program invocation of a real program in LiteSVM; signers come only from the transaction. */
  invoke(instruction: TransactionInstruction): void;
  /** Like invoke, with the given PDAs (derived from this program id; checked) signing as well. */
  invokeSigned(instruction: TransactionInstruction, pdaSigners: readonly PublicKey[]): void;
  /** Cross-program invocation of another emulated program (e.g. pump migrate → PumpSwap create_pool). */
  invokeEmulated(instruction: TransactionInstruction, pdaSigners?: readonly PublicKey[]): void;

  /** Appends `Program log: <message>` to the transaction's logs. */
  log(message: string): void;
  /** Appends `Program data: <base64>` (an anchor event: 8-byte discriminator + borsh body). */
  emitData(bytes: Buffer): void;
  /** `sol_set_return_data`: what an anchor instruction with a `returns` type hands back (simulateTransaction's `returnData`). */
  setReturnData(bytes: Buffer): void;
}

export interface GenesisContext {
  /** Writes an account outright (only at genesis). */
  setAccount(pubkey: PublicKey, state: AccountState): void;
  rentExempt(dataLength: number): bigint;
  /** Runs real instructions with the given extra signers (keypairs held by the localnet, e.g. a stablecoin's mint authority). */
  run(instructions: TransactionInstruction[], signers: readonly PublicKey[]): void;
}

/** A failure with an anchor-style custom error code, reported as InstructionError [index, { Custom: code }]. */
export class ProgramError extends Error {
  constructor(
    readonly code: number,
    readonly errorName: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProgramError';
  }
}

/** Anchor's framework errors that the emulated programs raise, by their real numbers. */
export const ANCHOR_ERRORS = {
  InstructionFallbackNotFound: 101,
  InstructionDidNotDeserialize: 102,
  ConstraintMut: 2000,
  ConstraintHasOne: 2001,
  ConstraintSigner: 2002,
  ConstraintRaw: 2003,
  ConstraintOwner: 2004,
  ConstraintSeeds: 2006,
  ConstraintAddress: 2012,
  AccountDiscriminatorMismatch: 3002,
  AccountNotInitialized: 3012,
  AccountOwnedByWrongProgram: 3007,
} as const;

export function anchorError(name: keyof typeof ANCHOR_ERRORS, detail?: string): ProgramError {
  return new ProgramError(ANCHOR_ERRORS[name], name, detail ?? name);
}
