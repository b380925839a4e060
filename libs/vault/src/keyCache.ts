import { sameHash } from './crypto';

interface Verified {
  agentId: string;
  keyHash: string;
  /** Date.now() when the row was read. */
  readAt: number;
}

/** How many verified keys a process keeps: far more than the citizens active at once. */
export const KEY_CACHE_ENTRIES = 100_000;
/** A verified key is read again after this long, whatever the notifications said. */
export const KEY_CACHE_MAX_AGE_MS = 10 * 60_000;
/** How long a rotation waits for its own notification to come back before it answers anyway. */
const ROTATION_ECHO_MS = 1000;

/**
 * The keys this process has verified, so that a request does not read its credential row again. A rotation
 * (on any process) notifies every process in the transaction that replaces the key, so the old key is
 * forgotten when that commits. Nothing is kept while the notifications are not being heard (before the
 * subscription is up, or after it was cut until it is back): a rotation then could go unnoticed.
 */
export class KeyCache {
  private readonly byKeyId = new Map<string, Verified>();
  private readonly keyIdOf = new Map<string, string>();
  private listening = false;
  /** Counts rotations heard and subscription changes, so a row read across one of them is not kept. */
  private heard = 0;
  private readonly echoes = new Map<string, Set<() => void>>();

  constructor(
    private readonly limit = KEY_CACHE_ENTRIES,
    private readonly maxAgeMs = KEY_CACHE_MAX_AGE_MS,
  ) {}

  /** The agent the key belongs to, if this process verified it (id and hash) and nothing has rotated it since. */
  agentOf(keyId: string, keyHash: string): string | undefined {
    const verified = this.byKeyId.get(keyId);
    if (!verified) return undefined;
    if (Date.now() - verified.readAt > this.maxAgeMs) {
      this.forget(verified.agentId);
      return undefined;
    }
    return sameHash(verified.keyHash, keyHash) ? verified.agentId : undefined;
  }

  /** Where the notifications stand: take it before reading a row, and give it back to `remember`. */
  get mark(): number {
    return this.heard;
  }

  /**
   * Keeps a row read from the credentials table, unless notifications are not being heard, or one was heard
   * since `mark` was taken: the row may predate that rotation.
   */
  remember(keyId: string, agentId: string, keyHash: string, mark: number, readAt = Date.now()): void {
    if (!this.listening || mark !== this.heard) return;
    this.forget(agentId);
    if (this.byKeyId.size >= this.limit) {
      // Maps iterate in insertion order: the first entry is the one verified longest ago.
      const oldest = this.byKeyId.values().next().value as Verified;
      this.forget(oldest.agentId);
    }
    this.byKeyId.set(keyId, { agentId, keyHash, readAt });
    this.keyIdOf.set(agentId, keyId);
  }

  /** The credential of `agentId` changed or went away (a notification, or this process changed it). */
  forget(agentId: string): void {
    const keyId = this.keyIdOf.get(agentId);
    if (keyId === undefined) return;
    this.keyIdOf.delete(agentId);
    this.byKeyId.delete(keyId);
  }

  /** A notification arrived: forget the agent's key, and wake whoever waits for this rotation's echo. */
  rotated(agentId: string): void {
    this.heard++;
    this.forget(agentId);
    const waiting = this.echoes.get(agentId);
    if (!waiting) return;
    this.echoes.delete(agentId);
    for (const wake of waiting) wake();
  }

  /**
   * Resolves when this process hears the notification of a rotation of `agentId`, or after a bound: by then the
   * database has sent it to every listening process. Start waiting before the rotation commits.
   */
  echoOf(agentId: string): { heard: Promise<void>; cancel(): void } {
    const waiting = this.echoes.get(agentId) ?? new Set<() => void>();
    this.echoes.set(agentId, waiting);
    let finish!: () => void;
    const heard = new Promise<void>((resolve) => {
      const timer = setTimeout(() => finish(), ROTATION_ECHO_MS);
      finish = () => {
        clearTimeout(timer);
        waiting.delete(finish);
        if (waiting.size === 0 && this.echoes.get(agentId) === waiting) this.echoes.delete(agentId);
        resolve();
      };
    });
    waiting.add(finish);
    return { heard, cancel: finish };
  }

  /** The subscription to rotations was lost or is back: either way, what was kept may be stale. */
  setListening(listening: boolean): void {
    this.heard++;
    this.listening = listening;
    this.byKeyId.clear();
    this.keyIdOf.clear();
  }

  get size(): number {
    return this.byKeyId.size;
  }
}
