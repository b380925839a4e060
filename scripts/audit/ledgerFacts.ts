import type { LedgerEntry } from '@svc/ledger';

const HASH_BYTES = 32;
/** Room for entries appended while the audit walks, before the buffer grows. */
const SLACK_ENTRIES = 1024;
const TREASURY_HANDLE = 'treasury';

/** An anchor as the ledger records it: the `anchor` action of @treasury. */
export interface RecordedAnchor {
  signature: string;
  seq: unknown;
  hash: unknown;
  memo: unknown;
  /** The seq of the ActionRecorded entry itself. */
  ledgerSeq: number;
}

/**
 * What the anchor check needs from the chain the audit walked: every entry's hash by seq (32 bytes each in one
 * growing buffer, so a ledger of millions of entries costs tens of megabytes, not a Map of strings), the
 * treasury the ledger registers, and the anchors it records.
 */
export class LedgerFacts {
  private hashes: Buffer;
  private count = 0;
  treasury: { wallet: string; agentId: string } | undefined;
  readonly recorded: RecordedAnchor[] = [];

  /** `expected`: the length the service attests, so that the buffer is allocated once, not doubled past it. */
  constructor(expected = 0) {
    this.hashes = Buffer.alloc(HASH_BYTES * (expected + SLACK_ENTRIES));
  }

  get length(): number {
    return this.count;
  }

  /** Takes in the next verified entry; entries arrive in seq order from 0. */
  add(entry: LedgerEntry): void {
    if (entry.seq !== this.count) throw new Error(`ledger facts: seq ${entry.seq} after ${this.count - 1}`);
    if ((this.count + 1) * HASH_BYTES > this.hashes.length) {
      const grown = Buffer.alloc(Math.ceil((this.hashes.length * 1.5) / HASH_BYTES) * HASH_BYTES);
      this.hashes.copy(grown);
      this.hashes = grown;
    }
    this.hashes.write(entry.hash, this.count * HASH_BYTES, HASH_BYTES, 'hex');
    this.count += 1;
    const data = entry.data as Record<string, unknown>;
    if (entry.type === 'CitizenRegistered' && data.handle === TREASURY_HANDLE && !this.treasury) {
      this.treasury = { wallet: String(data.wallet), agentId: String(data.agent_id) };
    }
    if (entry.type === 'ActionRecorded' && data.action === 'anchor' && typeof data.signature === 'string') {
      const details = (data.details ?? {}) as Record<string, unknown>;
      this.recorded.push({ signature: data.signature, seq: details.seq, hash: details.hash, memo: details.memo, ledgerSeq: entry.seq });
    }
  }

  /** The hash the audit recomputed at `seq`, or undefined past the walked chain. */
  hashAt(seq: number): string | undefined {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.count) return undefined;
    return this.hashes.toString('hex', seq * HASH_BYTES, (seq + 1) * HASH_BYTES);
  }
}
