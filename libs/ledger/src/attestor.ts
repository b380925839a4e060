import { GENESIS_HASH, checkStoredEntry, type LedgerEntry } from './chain';
import type { EventStore } from './eventStore';
import { LEDGER_STREAM } from './ledgerWriter';
import type { SnapshotStore } from './snapshotStore';

const PREFIX_RECORD = 'attested-prefix';

export const HASH_CONSTRUCTION =
  'hash = sha256_hex(prev + "\\n" + JCS({seq, type, at, actor, data})); JCS is RFC 8785 canonical JSON; ' +
  'prev of seq 0 is 64 zeros; seq is 0-based and gapless';

export interface Attestation {
  head: string;
  length: number;
  verified: { ok: boolean; checked: number; first_bad_seq?: number; reason?: string };
  hash_construction: string;
}

/** A store that can say which stored rows were ever changed (PostgreSQL marks them with a trigger). */
interface TamperAware {
  lowestTamperedRevision(stream: string): Promise<number | null>;
}

function isTamperAware(store: EventStore): store is EventStore & TamperAware {
  return typeof (store as Partial<TamperAware>).lowestTamperedRevision === 'function';
}

/**
 * Verifies the stored chain incrementally: the verified prefix is remembered (across restarts and
 * processes when a record store is given) and only the tail is read, unless a stored row inside the
 * prefix was changed or a full check is asked for.
 */
export class Attestor {
  private verifiedSeq = -1;
  private verifiedHash = GENESIS_HASH;
  private queue: Promise<unknown> = Promise.resolve();
  private pending: Promise<Attestation> | null = null;

  private loaded = false;

  constructor(
    private readonly store: EventStore,
    private readonly records?: SnapshotStore,
  ) {}

  /** Runs never overlap: they share the remembered prefix. Callers arriving while one waits share it. */
  attest(options: { full?: boolean } = {}): Promise<Attestation> {
    if (this.pending && !options.full) return this.pending;
    const run = this.queue.then(() => {
      if (this.pending === run) this.pending = null;
      return this.verify(options.full ?? false);
    });
    if (!options.full) this.pending = run;
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The entry at the end of the verified prefix is still there with the hash verified then. */
  private async prefixEndIntact(): Promise<boolean> {
    if (this.verifiedSeq < 0) return true;
    const [stored] = await this.store.readForward(LEDGER_STREAM, this.verifiedSeq, 1);
    return stored?.revision === this.verifiedSeq && storedHash(stored.data) === this.verifiedHash;
  }

  /** Starts from the prefix another run (maybe another process) verified, if it is still intact. */
  private async loadPrefix(): Promise<void> {
    if (this.loaded || !this.records) return;
    this.loaded = true;
    const record = await this.records.load(PREFIX_RECORD);
    if (record && record.seq > this.verifiedSeq) {
      this.verifiedSeq = record.seq;
      this.verifiedHash = record.hash;
    }
  }

  private async savePrefix(): Promise<void> {
    if (!this.records || this.verifiedSeq < 0) return;
    await this.records.save({ name: PREFIX_RECORD, version: 1, seq: this.verifiedSeq, hash: this.verifiedHash, at: Date.now(), state: {} });
  }

  private async verify(full: boolean): Promise<Attestation> {
    await this.loadPrefix();
    const tampered = isTamperAware(this.store) ? await this.store.lowestTamperedRevision(LEDGER_STREAM) : null;
    if (full || (tampered !== null && tampered <= this.verifiedSeq) || !(await this.prefixEndIntact())) {
      this.verifiedSeq = -1;
      this.verifiedHash = GENESIS_HASH;
      await this.records?.forget(PREFIX_RECORD);
    }
    const startedAt = this.verifiedSeq;
    let firstBad: { seq: number; reason: string } | undefined;
    let lastHash = this.verifiedHash;
    let length = this.verifiedSeq + 1;
    for (;;) {
      const batch = await this.store.readForward(LEDGER_STREAM, length, 1000);
      for (const stored of batch) {
        if (stored.revision !== length) {
          firstBad ??= { seq: length, reason: `revision ${length} is missing` };
        }
        if (!firstBad) {
          const check = checkStoredEntry(stored.data, stored.revision, lastHash);
          if (check.ok) {
            this.verifiedSeq = stored.revision;
            this.verifiedHash = check.entry.hash;
          } else {
            firstBad = { seq: stored.revision, reason: check.reason };
          }
        }
        lastHash = storedHash(stored.data) ?? lastHash;
        length = stored.revision + 1;
      }
      if (batch.length < 1000) break;
    }
    if (this.verifiedSeq > startedAt) await this.savePrefix();
    return {
      head: length === 0 ? GENESIS_HASH : lastHash,
      length,
      verified: firstBad
        ? { ok: false, checked: this.verifiedSeq + 1, first_bad_seq: firstBad.seq, reason: firstBad.reason }
        : { ok: true, checked: this.verifiedSeq + 1 },
      hash_construction: HASH_CONSTRUCTION,
    };
  }
}

function storedHash(data: string): string | undefined {
  try {
    const hash = (JSON.parse(data) as LedgerEntry).hash;
    return typeof hash === 'string' ? hash : undefined;
  } catch {
    return undefined;
  }
}
