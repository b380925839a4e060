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

/**
 * What a transaction leaves behind besides state: its log lines and its inner instructions (every
 * cross-program invocation, named by indexes into the transaction's account keys, as the RPC reports them).
 */
export class Trace {
  readonly logs: string[] = [];
  private readonly inner = new Map<number, InnerInstructionJson[]>();
  private readonly indexes: Map<string, number>;

  constructor(keys: readonly PublicKey[]) {
    this.indexes = new Map(keys.map((key, i) => [key.toBase58(), i]));
  }

  /** A CPI made while outer instruction `index` ran. Every account a CPI touches is among the transaction's keys. */
  invoked(index: number, programId: PublicKey, accounts: readonly PublicKey[], data: Uint8Array, stackHeight: number): void {
    const programIdIndex = this.indexes.get(programId.toBase58());
    const accountIndexes = accounts.map((key) => this.indexes.get(key.toBase58()));
    if (programIdIndex === undefined || accountIndexes.some((i) => i === undefined)) return;
    let list = this.inner.get(index);
    if (!list) this.inner.set(index, (list = []));
    list.push({ programIdIndex, accounts: accountIndexes as number[], data: bs58.encode(data), stackHeight });
  }

  /**
   * An anchor event: a `Program data:` log line, and the self-CPI to the program's event authority that
   * `emit_cpi!` makes, so that parsers reading either find it.
   */
  event(index: number, programId: PublicKey, depth: number, bytes: Buffer): void {
    this.logs.push(`Program data: ${bytes.toString('base64')}`);
    const [eventAuthority] = findPda([Buffer.from('__event_authority')], programId);
    if (!this.indexes.has(eventAuthority.toBase58())) return;
    const id = programId.toBase58();
    this.logs.push(`Program ${id} invoke [${depth + 1}]`, `Program ${id} consumed 2000 of 200000 compute units`, `Program ${id} success`);
    this.invoked(index, programId, [eventAuthority], Buffer.concat([EVENT_IX_TAG, bytes]), depth + 1);
  }

  innerInstructions(): InnerInstructionsJson[] {
    return [...this.inner].sort(([a], [b]) => a - b).map(([index, instructions]) => ({ index, instructions }));
  }
}
