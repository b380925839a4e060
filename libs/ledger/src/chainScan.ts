import { setImmediate as nextTurn } from 'node:timers/promises';
import { GENESIS_HASH, checkStoredLink } from './chain';

/** Rows per read: few enough round trips that reading costs about what hashing does. */
export const FULL_PASS_BATCH = 2000;

export interface BadLink {
  seq: number;
  reason: string;
  /** For a changed row, the hash its stored bytes give; for a broken link, the hash of the entry before. */
  expected_hash?: string;
  /** The hash (or prev) the row holds. */
  stored_hash?: string;
}

/** How far a scan got: `checked` entries from seq 0 are intact and the last of them hashes to `prev`. */
export interface ScanProgress {
  checked: number;
  prev: string;
}

export interface ScanResult extends ScanProgress {
  bad?: BadLink;
}

export type ReadRows = (from: number, maxCount: number) => Promise<Array<{ revision: number; data: string }>>;

export interface ScanOptions {
  /** Checks seqs 0 to this one. */
  head: number;
  /** Called after every page. */
  onPage?: (progress: ScanProgress) => void | Promise<void>;
  signal?: AbortSignal;
  /** Rows hashed between two turns of the event loop; 0 = never yield (a worker thread serves nothing else). */
  yieldEvery?: number;
}

/** Verifies the chain from seq 0 through `head` in keyset pages, stopping at the first bad entry. */
export async function scanChain(read: ReadRows, options: ScanOptions): Promise<ScanResult> {
  const { head, onPage, signal, yieldEvery = 0 } = options;
  let prev = GENESIS_HASH;
  let next = 0;
  let bad: BadLink | undefined;
  while (next <= head && !bad && !signal?.aborted) {
    // Keyset pages, one statement each: nothing is held between pages, so writers never wait on a scan.
    const batch = await read(next, Math.min(FULL_PASS_BATCH, head - next + 1));
    if (batch.length === 0) bad = { seq: next, reason: `revision ${next} is missing` };
    for (const [i, stored] of batch.entries()) {
      if (yieldEvery > 0 && i > 0 && i % yieldEvery === 0) await nextTurn();
      if (stored.revision !== next) {
        bad = { seq: next, reason: `revision ${next} is missing (the next stored is ${stored.revision})` };
        break;
      }
      const check = checkStoredLink(stored.data, next, prev);
      if (!check.ok) {
        bad = { seq: next, reason: check.reason, expected_hash: check.expected_hash, stored_hash: check.stored_hash };
        break;
      }
      prev = check.hash;
      next += 1;
    }
    await onPage?.({ checked: next, prev });
    if (yieldEvery > 0) await nextTurn();
  }
  return bad ? { checked: next, prev, bad } : { checked: next, prev };
}
