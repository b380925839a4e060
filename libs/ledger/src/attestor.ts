import { GENESIS_HASH, checkStoredLink, type LedgerEntry } from './chain';
import { scanChain, type BadLink, type ScanOptions, type ScanResult } from './chainScan';
import { scanChainInWorker, type ScanSource } from './chainScanThread';
import type { EventStore } from './eventStore';
import { LEDGER_STREAM } from './ledgerStream';
import type { Snapshot, SnapshotStore } from './snapshotStore';

const PREFIX_RECORD = 'attested-prefix';
const FULL_RECORD = 'attest-full';
const INCREMENTAL_BATCH = 1000;
/** Rows hashed between two turns of the event loop, when a pass runs in the serving thread: about a millisecond of work. */
const HASH_SLICE = 250;
const HEARTBEAT_MS = 1000;
/** A running pass whose record has not moved for this long died with its process: another may start. */
const STALE_MS = 30_000;
/** A schedule looks this often (at most) whether a full pass is due, so that restarts do not reset it. */
const SCHEDULE_CHECK_MS = 60_000;

export const HASH_CONSTRUCTION =
  'hash = sha256_hex(prev + "\\n" + JCS({seq, type, at, actor, data})); JCS is RFC 8785 canonical JSON; ' +
  'prev of seq 0 is 64 zeros; seq is 0-based and gapless';

/** Inclusive range of seqs. */
export interface SeqRange {
  from: number;
  to: number;
}

/** A full re-verification from seq 0, as every process reports it. */
export interface FullPass {
  /** `abandoned`: its process stopped or died before it finished. */
  state: 'running' | 'finished' | 'abandoned';
  trigger: 'schedule' | 'request';
  started_at: number;
  /** The head when it started: it checks seqs 0 to this one; later entries are the incremental check's. */
  head_at_start: number;
  /** Entries checked so far. */
  checked: number;
  updated_at: number;
  finished_at?: number;
  ok?: boolean;
  first_bad?: BadLink;
}

export interface Attestation {
  head: string;
  length: number;
  verified: {
    ok: boolean;
    checked: number;
    first_bad_seq?: number;
    reason?: string;
    /** Entries hashed by this answer; absent when nothing new was stored. */
    checked_now?: SeqRange;
    /** The prefix taken from earlier checks (this process's, another's, or a full pass) without reading it again. */
    from_earlier?: SeqRange;
    /** When the last full pass finished, and whether it found the chain intact. */
    last_full_at?: number;
    last_full_ok?: boolean;
  };
  /** The running full pass, or the last one. */
  full?: FullPass;
  hash_construction: string;
}

/** What is kept of full passes: the current or last one, the last finished one and how far it proved the chain. */
interface FullRecord {
  running: boolean;
  pass: FullPass;
  last_finished?: { started_at: number; finished_at: number; ok: boolean };
  /** The last entry a finished pass found intact, from seq 0 on. */
  verified_through?: { seq: number; hash: string };
}

/** A store that can say which stored rows were ever changed (PostgreSQL marks them with a trigger). */
interface TamperAware {
  lowestTamperedRevision(stream: string): Promise<number | null>;
}

function isTamperAware(store: EventStore): store is EventStore & TamperAware {
  return typeof (store as Partial<TamperAware>).lowestTamperedRevision === 'function';
}

/** A store a worker thread can read over its own connection (PostgreSQL server, not PGlite or EventStoreDB). */
interface Scannable {
  scanSource(): ScanSource | undefined;
}

function isScannable(store: EventStore): store is EventStore & Scannable {
  return typeof (store as Partial<Scannable>).scanSource === 'function';
}

function scanSourceOf(store: EventStore): ScanSource | undefined {
  return isScannable(store) ? store.scanSource() : undefined;
}

export interface AttestorOptions {
  log?: { warn(details: object, message: string): void };
}

/**
 * Verifies the stored chain incrementally: the verified prefix is remembered (across restarts and
 * processes when a record store is given) and only the tail is read, unless a stored row inside the
 * prefix was changed or a full check is asked for. A row changed with the triggers bypassed leaves no
 * mark, so full passes from seq 0 run in the background, on a schedule and on demand; their progress
 * and result are kept in the record store, where every process reads them.
 */
export class Attestor {
  private verifiedSeq = -1;
  private verifiedHash = GENESIS_HASH;
  private queue: Promise<unknown> = Promise.resolve();
  private pending: Promise<Attestation> | null = null;
  private loaded = false;

  /** The pass this process runs. */
  private running: { record: FullRecord; abort: AbortController; done: Promise<void> } | undefined;
  private starting = false;
  /** The last full record this process wrote, for when there is no record store. */
  private localRecord: FullRecord | undefined;
  /** finished_at of the last full pass whose result the remembered prefix took in. */
  private appliedFullAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly store: EventStore,
    private readonly records?: SnapshotStore,
    private readonly options: AttestorOptions = {},
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

  /** Whether a full pass runs, here or in another live process. */
  async fullRunning(): Promise<boolean> {
    if (this.running || this.starting) return true;
    const record = await this.fullRecord();
    return record !== undefined && record.running && !this.isStale(record);
  }

  /**
   * Starts a full pass in the background unless one runs (here or in another process; the record store
   * lets one process at a time claim it). Says whether it started one. `done` settles when it ends.
   */
  async startFull(trigger: FullPass['trigger']): Promise<{ started: boolean; done?: Promise<void> }> {
    if (this.stopped || this.running || this.starting) return { started: false };
    this.starting = true;
    try {
      const previous = await this.fullRecord();
      const now = Date.now();
      const head = await this.store.headRevision(LEDGER_STREAM);
      const record: FullRecord = {
        running: true,
        pass: { state: 'running', trigger, started_at: now, head_at_start: head, checked: 0, updated_at: now },
        last_finished: previous?.last_finished,
      };
      if (this.records && !(await this.records.claim(toSnapshot(record, -1, GENESIS_HASH), now - STALE_MS))) return { started: false };
      this.localRecord = record;
      const abort = new AbortController();
      const done = this.runFull(record, abort.signal);
      this.running = { record, abort, done };
      return { started: true, done };
    } finally {
      this.starting = false;
    }
  }

  /** Starts a full pass whenever the last one (in any process) started `everyMs` ago or more; 0 = never. */
  schedule(everyMs: number): void {
    this.stopped = false;
    if (everyMs <= 0 || this.timer) return;
    const tick = async () => {
      const record = await this.fullRecord();
      if (!record || Date.now() - record.pass.started_at >= everyMs) await this.startFull('schedule');
    };
    this.timer = setInterval(() => {
      tick().catch((err: unknown) => this.options.log?.warn({ err }, 'scheduled full attestation failed to start'));
    }, Math.min(everyMs, SCHEDULE_CHECK_MS));
    this.timer.unref();
  }

  /** Ends the schedule and the running pass (recorded as abandoned, so another process may start one at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    const running = this.running;
    if (!running) return;
    running.abort.abort();
    await running.done;
  }

  private async runFull(record: FullRecord, signal: AbortSignal): Promise<void> {
    const pass = record.pass;
    let progress = { checked: 0, prev: GENESIS_HASH };
    let heartbeat = Date.now();
    try {
      const result = await this.scan({
        head: pass.head_at_start,
        signal,
        onPage: async (page) => {
          progress = page;
          pass.checked = page.checked;
          pass.updated_at = Date.now();
          if (this.records && pass.updated_at - heartbeat >= HEARTBEAT_MS) {
            heartbeat = pass.updated_at;
            await this.records.put(toSnapshot(record, page.checked - 1, page.prev));
          }
        },
      });
      progress = result;
      pass.checked = result.checked;
      const finishedAt = Date.now();
      record.running = false;
      if (signal.aborted) {
        pass.state = 'abandoned';
      } else {
        const ok = !result.bad;
        Object.assign(pass, { state: 'finished', finished_at: finishedAt, ok }, result.bad ? { first_bad: result.bad } : {});
        record.last_finished = { started_at: pass.started_at, finished_at: finishedAt, ok };
        record.verified_through = { seq: result.checked - 1, hash: result.prev };
      }
      pass.updated_at = finishedAt;
      await this.records?.put(toSnapshot(record, result.checked - 1, result.prev));
    } catch (err) {
      record.running = false;
      pass.state = 'abandoned';
      this.options.log?.warn({ err, checked: pass.checked }, 'full attestation stopped');
      await this.records?.put(toSnapshot(record, progress.checked - 1, progress.prev)).catch(() => undefined);
    } finally {
      this.running = undefined;
    }
  }

  /**
   * On a PostgreSQL server the pass runs in a worker thread with its own connection: hashing a million rows
   * in the serving thread, even in slices, moved request p99 through its turns and its garbage collections.
   */
  private scan(options: ScanOptions): Promise<ScanResult> {
    const source = scanSourceOf(this.store);
    if (source) return scanChainInWorker(source, LEDGER_STREAM, options);
    return scanChain((from, maxCount) => this.store.readForward(LEDGER_STREAM, from, maxCount), { ...options, yieldEvery: HASH_SLICE });
  }

  private isStale(record: FullRecord): boolean {
    return record.running && this.running?.record !== record && record.pass.updated_at < Date.now() - STALE_MS;
  }

  /** The pass this process runs, else the newest record any process wrote. */
  private async fullRecord(): Promise<FullRecord | undefined> {
    if (this.running || !this.records) return this.localRecord;
    const snapshot = await this.records.load(FULL_RECORD);
    return snapshot ? (snapshot.state as FullRecord) : undefined;
  }

  private publicPass(record: FullRecord): FullPass {
    return this.isStale(record) ? { ...record.pass, state: 'abandoned' } : { ...record.pass };
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

  /**
   * A finished full pass moves the remembered prefix: back to the entry before the first bad one it found
   * (the incremental answer then reports it too), or on to the head it proved.
   */
  private async takeFullResult(record: FullRecord | undefined): Promise<void> {
    const through = record?.verified_through;
    const finishedAt = record?.pass.finished_at;
    if (!record || record.running || !through || finishedAt === undefined || finishedAt <= this.appliedFullAt) return;
    this.appliedFullAt = finishedAt;
    if (record.pass.ok === false && through.seq < this.verifiedSeq) {
      this.verifiedSeq = through.seq;
      this.verifiedHash = through.hash;
      if (through.seq < 0) await this.records?.forget(PREFIX_RECORD);
      else await this.records?.put({ name: PREFIX_RECORD, version: 1, seq: through.seq, hash: through.hash, at: Date.now(), state: {} });
    } else if (record.pass.ok && through.seq > this.verifiedSeq) {
      this.verifiedSeq = through.seq;
      this.verifiedHash = through.hash;
    }
  }

  private async verify(full: boolean): Promise<Attestation> {
    await this.loadPrefix();
    // A copy: the running pass's record changes while this answer awaits, and the answer must report the
    // pass as it was when its result was (or was not yet) taken into the prefix.
    const found = await this.fullRecord();
    const record = found && structuredClone(found);
    await this.takeFullResult(record);
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
      const batch = await this.store.readForward(LEDGER_STREAM, length, INCREMENTAL_BATCH);
      for (const stored of batch) {
        if (stored.revision !== length) {
          firstBad ??= { seq: length, reason: `revision ${length} is missing` };
        }
        const check = firstBad ? undefined : checkStoredLink(stored.data, stored.revision, lastHash);
        if (check?.ok) {
          this.verifiedSeq = stored.revision;
          this.verifiedHash = check.hash;
          lastHash = check.hash;
        } else {
          if (check) firstBad = { seq: stored.revision, reason: check.reason };
          lastHash = storedHash(stored.data) ?? lastHash;
        }
        length = stored.revision + 1;
        if (firstBad) break;
      }
      if (firstBad || batch.length < INCREMENTAL_BATCH) break;
    }
    if (firstBad) {
      // Past a bad entry nothing is verified: the head is read, not the rows before it, so that every call
      // to a public endpoint does not read the rest of a broken ledger.
      const headSeq = await this.store.headRevision(LEDGER_STREAM);
      const [last] = headSeq >= length ? await this.store.readForward(LEDGER_STREAM, headSeq, 1) : [];
      if (last) {
        lastHash = storedHash(last.data) ?? lastHash;
        length = last.revision + 1;
      }
    }
    if (this.verifiedSeq > startedAt) await this.savePrefix();
    const checkedTo = firstBad ? firstBad.seq : this.verifiedSeq;
    const verified: Attestation['verified'] = firstBad
      ? { ok: false, checked: this.verifiedSeq + 1, first_bad_seq: firstBad.seq, reason: firstBad.reason }
      : { ok: true, checked: this.verifiedSeq + 1 };
    if (checkedTo > startedAt) verified.checked_now = { from: startedAt + 1, to: checkedTo };
    if (startedAt >= 0) verified.from_earlier = { from: 0, to: startedAt };
    const latest = record;
    if (latest?.last_finished) {
      verified.last_full_at = latest.last_finished.finished_at;
      verified.last_full_ok = latest.last_finished.ok;
    }
    return {
      head: length === 0 ? GENESIS_HASH : lastHash,
      length,
      verified,
      ...(latest ? { full: this.publicPass(latest) } : {}),
      hash_construction: HASH_CONSTRUCTION,
    };
  }
}

function toSnapshot(record: FullRecord, seq: number, hash: string): Snapshot {
  return { name: FULL_RECORD, version: 1, seq, hash, at: record.pass.updated_at, state: record };
}

function storedHash(data: string): string | undefined {
  try {
    const hash = (JSON.parse(data) as LedgerEntry).hash;
    return typeof hash === 'string' ? hash : undefined;
  } catch {
    return undefined;
  }
}
