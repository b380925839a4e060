import bs58 from 'bs58';
import { Account, LiteSvm, type TransactionMetadata } from 'litesvm/dist/internal';
import {
  AccountMeta,
  ComputeBudgetProgram,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
} from '@solana/web3.js';
import { fromLiteSvmError, TransactionErrorJson, TransactionFailure } from './errors';
import { AccountState, EmulatedProgram, InstructionAccount, InstructionContext, ProgramError } from './program';
import { InnerInstructionsJson, MAX_RETURN_DATA, ReturnData, Trace } from './trace';

/** A transaction message with its account keys resolved (lookup tables included). */
export interface LoadedMessage {
  keys: PublicKey[];
  signer: boolean[];
  writable: boolean[];
  instructions: { programIndex: number; accountIndexes: number[]; data: Buffer }[];
}

export interface ExecutionOutcome {
  err: TransactionErrorJson | null;
  logs: string[];
  innerInstructions: InnerInstructionsJson[];
  computeUnits: number;
  returnData: ReturnData | null;
}

const MAX_INVOKE_DEPTH = 4;
const onCurve = new Map<string, boolean>();

/** Whether an address is an ed25519 point (a wallet); memoised because the check decompresses a point in JavaScript. */
function isWallet(key: PublicKey): boolean {
  const id = key.toBase58();
  let result = onCurve.get(id);
  if (result === undefined) {
    result = PublicKey.isOnCurve(key.toBytes());
    if (onCurve.size > 100_000) onCurve.clear();
    onCurve.set(id, result);
  }
  return result;
}

export function readAccount(svm: LiteSvm, pubkey: PublicKey): AccountState | null {
  const raw = svm.getAccount(pubkey.toBytes());
  if (!raw) return null;
  return { lamports: raw.lamports(), data: Buffer.from(raw.data()), owner: new PublicKey(raw.owner()), executable: raw.executable() };
}

export function writeAccount(svm: LiteSvm, pubkey: PublicKey, state: AccountState | null): void {
  if (!state) {
    svm.setAccount(pubkey.toBytes(), new Account(0n, new Uint8Array(0), SystemProgram.programId.toBytes(), false, 0n));
    return;
  }
  svm.setAccount(pubkey.toBytes(), new Account(state.lamports, state.data, state.owner.toBytes(), state.executable, 0n));
}

/**
 * Runs a transaction that reaches at least one emulated program, one instruction at a time: real programs
 * execute inside LiteSVM as single-instruction transactions paid by a hidden runtime payer (signatures were
 * verified up front, so LiteSVM runs with sigverify off), emulated programs run here. The caller has charged
 * the fee and restores the writable accounts when the outcome carries an error.
 */
export class Executor {
  constructor(
    private readonly svm: LiteSvm,
    private readonly programs: ReadonlyMap<string, EmulatedProgram>,
    private readonly runtimePayer: PublicKey,
    private readonly clock: () => { slot: bigint; unixTimestamp: bigint },
    /** A JavaScript exception inside an emulated program is the emulator's bug, not the caller's. */
    private readonly onFault: (error: unknown) => void = () => {},
  ) {}

  isEmulated(programId: PublicKey): boolean {
    return this.programs.has(programId.toBase58());
  }

  execute(message: LoadedMessage): ExecutionOutcome {
    const trace = new Trace(message.keys);
    const logs = trace.logs;
    let computeUnits = 0;
    for (let index = 0; index < message.instructions.length; index++) {
      const compiled = message.instructions[index];
      const programId = message.keys[compiled.programIndex];
      if (programId.equals(ComputeBudgetProgram.programId)) {
        logs.push(`Program ${programId.toBase58()} invoke [1]`, `Program ${programId.toBase58()} success`);
        computeUnits += 150;
        continue;
      }
      const accounts: InstructionAccount[] = compiled.accountIndexes.map((i) => ({
        pubkey: message.keys[i],
        isSigner: message.signer[i],
        isWritable: message.writable[i],
      }));
      const instruction = new TransactionInstruction({ programId, keys: accounts, data: compiled.data });
      try {
        computeUnits += this.dispatch(instruction, index, 1, trace);
      } catch (error) {
        return { err: this.toTransactionError(error, index, message.keys), logs, innerInstructions: trace.innerInstructions(), computeUnits, returnData: trace.returnData };
      }
    }
    return { err: null, logs, innerInstructions: trace.innerInstructions(), computeUnits, returnData: trace.returnData };
  }

  private dispatch(instruction: TransactionInstruction, index: number, depth: number, trace: Trace): number {
    if (depth > 1) trace.invoked(index, instruction.programId, instruction.keys.map((k) => k.pubkey), instruction.data, depth);
    const program = this.programs.get(instruction.programId.toBase58());
    // Every invocation starts without return data, as the runtime clears it on entry.
    trace.returnData = null;
    if (!program) return this.runNative(instruction, index, depth, trace);
    const id = instruction.programId.toBase58();
    const logs = trace.logs;
    logs.push(`Program ${id} invoke [${depth}]`);
    const context = new EmulatedContext(this, program, instruction, index, depth, trace);
    try {
      program.execute(context);
    } catch (error) {
      if (error instanceof ProgramError) {
        logs.push(
          `Program log: AnchorError occurred. Error Code: ${error.errorName}. Error Number: ${error.code}. Error Message: ${error.message}.`,
          `Program ${id} consumed ${context.units} of 200000 compute units`,
          `Program ${id} failed: custom program error: 0x${error.code.toString(16)}`,
        );
      } else if (!(error instanceof InstructionFailure) && !(error instanceof TransactionLevelFailure)) {
        this.onFault(error);
        logs.push(`Program ${id} failed: Program failed to complete`);
      }
      throw error;
    }
    logs.push(`Program ${id} consumed ${context.units} of 200000 compute units`, `Program ${id} success`);
    return context.units;
  }

  /** Runs one real instruction inside LiteSVM; its logs and inner instructions are re-nested at the caller's depth. */
  runNative(instruction: TransactionInstruction, index: number, depth: number, trace: Trace): number {
    const { wire, keys } = syntheticTransaction(this.runtimePayer, this.svm.latestBlockhash(), instruction);
    const result = this.svm.sendLegacyTransaction(wire) as { err?: () => unknown; meta?: () => unknown };
    const meta = (result.meta ? result.meta() : result) as TransactionMetadata;
    const shift = depth - 1;
    const returned = meta.returnData();
    const returnedData = returned.data();
    trace.returnData = returnedData.length > 0 ? { programId: new PublicKey(returned.programId()), data: Buffer.from(returnedData) } : null;
    for (const line of meta.logs()) {
      trace.logs.push(shift === 0 ? line : line.replace(/ invoke \[(\d+)\]$/, (_, d: string) => ` invoke [${Number(d) + shift}]`));
    }
    for (const inner of meta.innerInstructions()[0] ?? []) {
      const compiled = inner.instruction();
      trace.invoked(index, keys[compiled.programIdIndex()], Array.from(compiled.accounts(), (i) => keys[i]), compiled.data(), inner.stackHeight() + shift);
    }
    if (result.err) {
      const err = fromLiteSvmError(result.err());
      if (typeof err === 'object' && 'InstructionError' in err) throw new InstructionFailure((err.InstructionError as [number, unknown])[1]);
      // Errors of the whole transaction (the rent check after execution) belong to the outer transaction, as on mainnet.
      const rent = typeof err === 'object' ? (err as { InsufficientFundsForRent?: { account_index: number } }).InsufficientFundsForRent : undefined;
      throw new TransactionLevelFailure(err, rent ? keys[rent.account_index] : undefined);
    }
    return Number(meta.computeUnitsConsumed());
  }

  invokeFrom(caller: EmulatedContext, instruction: TransactionInstruction, pdaSigners: readonly PublicKey[]): void {
    if (caller.depth >= MAX_INVOKE_DEPTH) throw new InstructionFailure('CallDepth');
    for (const meta of instruction.keys) checkPrivileges(caller, meta, pdaSigners);
    const granted = new Set(pdaSigners.map((k) => k.toBase58()));
    const keys = instruction.keys.map((meta) => ({ ...meta, isSigner: meta.isSigner || granted.has(meta.pubkey.toBase58()) }));
    caller.units += this.dispatch(new TransactionInstruction({ programId: instruction.programId, keys, data: instruction.data }), caller.index, caller.depth + 1, caller.trace);
  }

  account(pubkey: PublicKey): AccountState | null {
    return readAccount(this.svm, pubkey);
  }

  write(pubkey: PublicKey, state: AccountState): void {
    writeAccount(this.svm, pubkey, state);
  }

  rentExempt(length: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(length));
  }

  now(): { slot: bigint; unixTimestamp: bigint } {
    return this.clock();
  }

  private toTransactionError(error: unknown, index: number, keys: PublicKey[]): TransactionErrorJson {
    if (error instanceof TransactionLevelFailure) {
      if (!error.account) return error.error;
      return { InsufficientFundsForRent: { account_index: keys.findIndex((k) => k.equals(error.account!)) } };
    }
    if (error instanceof ProgramError) return { InstructionError: [index, { Custom: error.code }] };
    if (error instanceof InstructionFailure) return { InstructionError: [index, error.inner as never] };
    return { InstructionError: [index, 'ProgramFailedToComplete'] };
  }
}

let cachedBlockhash: { text: string; bytes: Buffer } | null = null;

/**
 * A legacy transaction of one instruction, paid by `payer`, serialized by hand: web3.js's message compiler
 * base58-encodes every key to deduplicate them, which was the largest cost of a CPI. Signatures are left
 * zero (LiteSVM runs with sigverify off and no duplicate check for these).
 */
export function syntheticTransaction(payer: PublicKey, blockhash: string, instruction: TransactionInstruction): { wire: Buffer; keys: PublicKey[] } {
  const metas: { pubkey: PublicKey; isSigner: boolean; isWritable: boolean }[] = [{ pubkey: payer, isSigner: true, isWritable: true }];
  const add = (pubkey: PublicKey, isSigner: boolean, isWritable: boolean) => {
    const known = metas.find((m) => m.pubkey.equals(pubkey));
    if (known) {
      known.isSigner ||= isSigner;
      known.isWritable ||= isWritable;
    } else {
      metas.push({ pubkey, isSigner, isWritable });
    }
  };
  for (const meta of instruction.keys) add(meta.pubkey, meta.isSigner, meta.isWritable);
  add(instruction.programId, false, false);
  const rank = (m: (typeof metas)[number]) => (m.isSigner ? (m.isWritable ? 0 : 1) : m.isWritable ? 2 : 3);
  const ordered = [metas[0], ...metas.slice(1).sort((a, b) => rank(a) - rank(b))];
  const keys = ordered.map((m) => m.pubkey);
  const indexOf = (key: PublicKey) => keys.findIndex((k) => k.equals(key));
  const signers = ordered.filter((m) => m.isSigner).length;
  if (cachedBlockhash?.text !== blockhash) cachedBlockhash = { text: blockhash, bytes: Buffer.from(bs58.decode(blockhash)) };
  const data = Buffer.from(instruction.data);
  const parts = [
    shortVec(signers),
    Buffer.alloc(64 * signers),
    Buffer.from([signers, ordered.filter((m) => m.isSigner && !m.isWritable).length, ordered.filter((m) => !m.isSigner && !m.isWritable).length]),
    shortVec(keys.length),
    ...keys.map((k) => k.toBuffer()),
    cachedBlockhash.bytes,
    shortVec(1),
    Buffer.from([indexOf(instruction.programId)]),
    shortVec(instruction.keys.length),
    Buffer.from(instruction.keys.map((m) => indexOf(m.pubkey))),
    shortVec(data.length),
    data,
  ];
  return { wire: Buffer.concat(parts), keys };
}

function shortVec(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  for (;;) {
    const byte = rest & 0x7f;
    rest >>= 7;
    if (rest === 0) {
      bytes.push(byte);
      return Buffer.from(bytes);
    }
    bytes.push(byte | 0x80);
  }
}

/** A failure of the transaction as a whole, raised inside a CPI; `account` is the account the error names. */
export class TransactionLevelFailure extends Error {
  constructor(
    readonly error: TransactionErrorJson,
    readonly account?: PublicKey,
  ) {
    super(typeof error === 'string' ? error : JSON.stringify(error));
  }
}

/** A runtime-level instruction failure (not a program's custom error). */
export class InstructionFailure extends Error {
  constructor(readonly inner: unknown) {
    super(typeof inner === 'string' ? inner : JSON.stringify(inner));
  }
}

function checkPrivileges(caller: EmulatedContext, meta: AccountMeta, pdaSigners: readonly PublicKey[]): void {
  const outer = caller.accounts.find((a) => a.pubkey.equals(meta.pubkey));
  if (meta.isWritable && !(outer?.isWritable || caller.created.has(meta.pubkey.toBase58()))) {
    throw new InstructionFailure('PrivilegeEscalation');
  }
  if (meta.isSigner && !outer?.isSigner && !pdaSigners.some((k) => k.equals(meta.pubkey))) {
    throw new InstructionFailure('PrivilegeEscalation');
  }
}

class EmulatedContext implements InstructionContext {
  readonly programId: PublicKey;
  readonly data: Buffer;
  readonly accounts: InstructionAccount[];
  readonly clock: { slot: bigint; unixTimestamp: bigint };
  readonly created = new Set<string>();
  units = 1000;

  constructor(
    private readonly executor: Executor,
    program: EmulatedProgram,
    instruction: TransactionInstruction,
    readonly index: number,
    readonly depth: number,
    readonly trace: Trace,
  ) {
    this.programId = program.programId;
    this.data = Buffer.from(instruction.data);
    this.accounts = instruction.keys.map((k) => ({ pubkey: k.pubkey, isSigner: k.isSigner, isWritable: k.isWritable }));
    this.clock = executor.now();
  }

  account(pubkey: PublicKey): AccountState | null {
    return this.executor.account(pubkey);
  }

  rentExempt(dataLength: number): bigint {
    return this.executor.rentExempt(dataLength);
  }

  writeOwned(pubkey: PublicKey, data: Buffer, lamports?: bigint): void {
    const current = this.owned(pubkey);
    this.executor.write(pubkey, { ...current, data, lamports: lamports ?? current.lamports });
  }

  createOwned(payer: PublicKey, pubkey: PublicKey, data: Buffer): void {
    const existing = this.account(pubkey);
    if (existing && (existing.data.length > 0 || !existing.owner.equals(SystemProgram.programId))) {
      throw new InstructionFailure('AccountAlreadyInitialized');
    }
    const rent = this.rentExempt(data.length);
    const held = existing?.lamports ?? 0n;
    if (held < rent) {
      this.executor.invokeFrom(this, SystemProgram.transfer({ fromPubkey: payer, toPubkey: pubkey, lamports: rent - held }), []);
    }
    const funded = this.account(pubkey)!;
    this.created.add(pubkey.toBase58());
    this.executor.write(pubkey, { lamports: funded.lamports, data, owner: this.programId, executable: false });
  }

  transferOwnedLamports(from: PublicKey, to: PublicKey, lamports: bigint): void {
    if (lamports === 0n) return;
    const source = this.owned(from);
    if (source.lamports < lamports) throw new InstructionFailure('InsufficientFunds');
    this.requireWritable(to);
    this.executor.write(from, { ...source, lamports: source.lamports - lamports });
    const target = this.account(to) ?? { lamports: 0n, data: Buffer.alloc(0), owner: SystemProgram.programId, executable: false };
    this.executor.write(to, { ...target, lamports: target.lamports + lamports });
  }

  invoke(instruction: TransactionInstruction): void {
    this.executor.invokeFrom(this, instruction, []);
  }

  invokeSigned(instruction: TransactionInstruction, pdaSigners: readonly PublicKey[]): void {
    // A PDA has no private key, so an off-curve address is the only thing a program could ever sign for.
    for (const pda of pdaSigners) if (isWallet(pda)) throw new InstructionFailure('PrivilegeEscalation');
    this.executor.invokeFrom(this, instruction, pdaSigners);
  }

  invokeEmulated(instruction: TransactionInstruction, pdaSigners: readonly PublicKey[] = []): void {
    if (!this.executor.isEmulated(instruction.programId)) throw new InstructionFailure('UnsupportedProgramId');
    this.invokeSigned(instruction, pdaSigners);
  }

  log(message: string): void {
    this.trace.logs.push(`Program log: ${message}`);
  }

  emitData(bytes: Buffer): void {
    this.trace.event(this.index, this.programId, this.depth, bytes);
  }

  setReturnData(bytes: Buffer): void {
    if (bytes.length > MAX_RETURN_DATA) throw new InstructionFailure('ProgramFailedToComplete');
    this.trace.returnData = bytes.length > 0 ? { programId: this.programId, data: Buffer.from(bytes) } : null;
    this.trace.logs.push(`Program return: ${this.programId.toBase58()} ${bytes.toString('base64')}`);
  }

  private owned(pubkey: PublicKey): AccountState {
    this.requireWritable(pubkey);
    const current = this.account(pubkey);
    if (!current || !current.owner.equals(this.programId)) throw new InstructionFailure('ExternalAccountDataModified');
    return current;
  }

  private requireWritable(pubkey: PublicKey): void {
    const meta = this.accounts.find((a) => a.pubkey.equals(pubkey));
    if (!meta?.isWritable && !this.created.has(pubkey.toBase58())) throw new InstructionFailure('ReadonlyDataModified');
  }
}

export { TransactionFailure };
