import bs58 from 'bs58';
import type { PublicKey } from '@solana/web3.js';
import { findPda } from './pda';

export interface InnerInstructionJson {
  programIdIndex: number;
  accounts: number[];
  data: string;
  stackHeight: number;
}

export interface InnerInstructionsJson {
  index: number;
  instructions: InnerInstructionJson[];
}

/** Anchor's tag for an event emitted as a self-CPI (`emit_cpi!`): the bytes of u64 0x1d9acb512ea545e4, little-endian. */
const EVENT_IX_TAG = Buffer.from('e445a52e51cb9a1d', 'hex');

/** `sol_set_return_data`'s limit. */
export const MAX_RETURN_DATA = 1024;

export interface ReturnData {
  programId: PublicKey;
  data: Buffer;
}

/**
 * What a transaction leaves behind besides state: its log lines, its inner instructions (every cross-program
 * invocation, named by indexes into the transaction's account keys, as the RPC reports them) and its return data.
 */
export class Trace {
  readonly logs: string[] = [];
  /** The transaction's return data: whatever the last program to run left, as the runtime keeps it. */
  returnData: ReturnData | null = null;
  private readonly inner = new Map<number, InnerInstructionJson[]>();
  constructor(private readonly keys: readonly PublicKey[]) {}

  // A linear scan with equals: a transaction has a few dozen keys, and base58-encoding them costs more.
  private indexOf(key: PublicKey): number | undefined {
    const i = this.keys.findIndex((k) => k.equals(key));
    return i < 0 ? undefined : i;
  }

  /** A CPI made while outer instruction `index` ran. Every account a CPI touches is among the transaction's keys. */
  invoked(index: number, programId: PublicKey, accounts: readonly PublicKey[], data: Uint8Array, stackHeight: number): void {
    const programIdIndex = this.indexOf(programId);
    const accountIndexes = accounts.map((key) => this.indexOf(key));
    if (programIdIndex === undefined || accountIndexes.some((i) => i === undefined)) return;
    let list = this.inner.get(index);
    if (!list) this.inner.set(index, (list = []));
    list.push(innerInstruction(programIdIndex, accountIndexes as number[], data, stackHeight));
  }

  /**
   * An anchor event: a `Program data:` log line, and the self-CPI to the program's event authority that
   * `emit_cpi!` makes, so that parsers reading either find it.
   */
  event(index: number, programId: PublicKey, depth: number, bytes: Buffer): void {
    this.logs.push(`Program data: ${bytes.toString('base64')}`);
    const [eventAuthority] = findPda([Buffer.from('__event_authority')], programId);
    if (this.indexOf(eventAuthority) === undefined) return;
    const id = programId.toBase58();
    this.logs.push(`Program ${id} invoke [${depth + 1}]`, `Program ${id} consumed 2000 of 200000 compute units`, `Program ${id} success`);
    this.invoked(index, programId, [eventAuthority], Buffer.concat([EVENT_IX_TAG, bytes]), depth + 1);
  }

  innerInstructions(): InnerInstructionsJson[] {
    return [...this.inner].sort(([a], [b]) => a - b).map(([index, instructions]) => ({ index, instructions }));
  }
}

/** The bytes behind each inner instruction's lazy base58, so that a snapshot can keep them without encoding them. */
const rawData = new WeakMap<InnerInstructionJson, Uint8Array>();

/** An inner instruction whose base58 data is encoded only if someone reads it: most transactions are never fetched. */
export function innerInstruction(programIdIndex: number, accounts: number[], data: Uint8Array, stackHeight: number): InnerInstructionJson {
  const bytes = Uint8Array.from(data);
  let encoded: string | undefined;
  const entry = { programIdIndex, accounts, stackHeight } as InnerInstructionJson;
  Object.defineProperty(entry, 'data', { enumerable: true, get: () => (encoded ??= bs58.encode(bytes)) });
  rawData.set(entry, bytes);
  return entry;
}

/**
 * How a snapshot keeps an inner instruction: its data in base64. Base58 is quadratic in the data's length, and
 * encoding every event of the last 2,000 transactions held the loop for about 400 ms per snapshot.
 */
export type StoredInnerInstruction = Omit<InnerInstructionJson, 'data'> & ({ data64: string } | { data: string });

export interface StoredInnerInstructions {
  index: number;
  instructions: StoredInnerInstruction[];
}

export function storedInnerInstructions(lists: InnerInstructionsJson[]): StoredInnerInstructions[] {
  return lists.map(({ index, instructions }) => ({
    index,
    instructions: instructions.map((entry) => {
      const { programIdIndex, accounts, stackHeight } = entry;
      const bytes = rawData.get(entry);
      return bytes ? { programIdIndex, accounts, stackHeight, data64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') } : { programIdIndex, accounts, stackHeight, data: entry.data };
    }),
  }));
}

/** Back from a snapshot; those written before base64 carry the base58 `data` itself. */
export function revivedInnerInstructions(lists: StoredInnerInstructions[]): InnerInstructionsJson[] {
  return lists.map(({ index, instructions }) => ({
    index,
    instructions: instructions.map((entry) =>
      'data64' in entry ? innerInstruction(entry.programIdIndex, entry.accounts, Buffer.from(entry.data64, 'base64'), entry.stackHeight) : entry,
    ),
  }));
}
