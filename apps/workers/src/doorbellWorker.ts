import type https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Logger } from 'pino';
import { DOORBELL_CHANNEL, PROJECTED_CHANNEL, type Bus, type Notification } from '@svc/bus';
import { kindOf, untrustedOfEntry } from '@svc/domain';
import { announces } from '@svc/projections';
import { RINGING_KINDS, type ClaimedDelivery, type DeliveryStatus, type DoorbellStore } from '@svc/vault';
import { createDoorbellAgent, postOnce, signatureHeader, type PostOutcome } from './delivery';
import { WorkerLoop } from './loop';

/** One attempt as recorded: what was sent, what came back, and where it left the delivery and its doorbell. */
export interface RecordedAttempt {
  deliveryId: string;
  doorbellId: string;
  seq: number;
  attempt: number;
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
  /** Undefined when nothing moved (the doorbell was removed, or this worker's lease had run out). */
  status: DeliveryStatus | undefined;
  muted: boolean;
  failures: number;
}

/** Knobs with production defaults; tests shorten the backoff instead of sleeping. */
export interface DoorbellWorkerTuning {
  /**
   * First retry delay; each further try doubles it, with jitter, up to backoffMaxMs. The same schedule
   * pauses a doorbell after consecutive failures (its n-th failure in a row: nothing is sent to it for
   * backoff(n)), so the ten failures that mute it take 21 to 43 minutes of outage at the defaults.
   */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** The whole exchange with a receiver: connect, TLS, answer. */
  timeoutMs?: number;
  /** Looks for work this often even without a bus notification (one may be missed). */
  pollMs?: number;
  /** Deliveries in flight at once in this process (never more than one per doorbell, across processes). */
  concurrency?: number;
  /** How long a claimed delivery stays this worker's before another may take it (a crashed worker). */
  leaseMs?: number;
  /** How long stop() waits for deliveries in flight before cutting them off and giving them back. */
  stopGraceMs?: number;
  /** Ledger entries examined per fan-out transaction. */
  fanoutBatch?: number;
  /** Stands in for DNS (tests). */
  lookup?: LookupFunction;
  /** Jitter source, for a deterministic test of the backoff. */
  random?: () => number;
  /** Called after each attempt is recorded (committed), e.g. for metrics or for a test to wait on. */
  onAttemptRecorded?: (attempt: RecordedAttempt) => void;
}

export interface DoorbellWorkerOptions extends DoorbellWorkerTuning {
  store: DoorbellStore;
  bus?: Bus;
  log: Logger;
  allowLoopback: boolean;
  caFile?: string;
}

const DEFAULTS = {
  backoffBaseMs: 5_000,
  backoffMaxMs: 3_600_000,
  timeoutMs: 5_000,
  pollMs: 3_000,
  concurrency: 8,
  leaseMs: 60_000,
  stopGraceMs: 10_000,
  fanoutBatch: 1_000,
};

/**
 * Exponential backoff with jitter: the n-th retry (from 1) waits between half and all of
 * min(max, base * 2^(n-1)), so receivers that failed together do not get retried together.
 */
export function backoffMs(tries: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, tries - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/**
 * The JSON a doorbell receives: `{delivery_id, kind, seq, at, data}` (the id inside what is signed, for a receiver
 * to drop a delivery it has already taken), data being the entry's data with its type, actor and hash,
 * and `untrusted` beside it when the citizen's words in it read as instructions to an agent.
 */
export function deliveryPayload(delivery: Pick<ClaimedDelivery, 'id' | 'kind' | 'seq' | 'entry'>): Record<string, unknown> {
  const entry = delivery.entry!;
  const untrusted = untrustedOfEntry(entry.type, entry.data);
  return { delivery_id: delivery.id, kind: delivery.kind, seq: entry.seq, at: entry.at, data: { ...entry.data, type: entry.type, actor: entry.actor, hash: entry.hash }, ...(untrusted ? { untrusted } : {}) };
}

export interface RunningDoorbellWorker {
  /** Looks for work now (fan-out and due deliveries). */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * Follows the ledger (the read model's `entries`) to queue deliveries, and delivers what is due, in
 * this process. Any number of these may run against one database: the fan-out position and the
 * deliveries are claimed with row locks, never held in memory.
 */
export async function startDoorbellWorker(options: DoorbellWorkerOptions): Promise<RunningDoorbellWorker> {
  const worker = new DoorbellWorker(options, await createDoorbellAgent(options));
  await worker.start();
  return worker;
}

class DoorbellWorker implements RunningDoorbellWorker {
  private readonly tuning: Required<Omit<DoorbellWorkerTuning, 'lookup' | 'random' | 'onAttemptRecorded'>>;
  private readonly random: () => number;
  private readonly inFlight = new Map<Promise<void>, AbortController>();
  private readonly loop: WorkerLoop;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly options: DoorbellWorkerOptions,
    private readonly agent: https.Agent,
  ) {
    const pick = <K extends keyof typeof DEFAULTS>(key: K) => options[key] ?? DEFAULTS[key];
    this.tuning = {
      backoffBaseMs: pick('backoffBaseMs'),
      backoffMaxMs: pick('backoffMaxMs'),
      timeoutMs: pick('timeoutMs'),
      pollMs: pick('pollMs'),
      concurrency: Math.max(1, pick('concurrency')),
      leaseMs: Math.max(pick('leaseMs'), pick('timeoutMs') * 2),
      stopGraceMs: pick('stopGraceMs'),
      fanoutBatch: pick('fanoutBatch'),
    };
    this.random = options.random ?? Math.random;
    this.loop = new WorkerLoop({
      name: 'doorbell worker',
      log: options.log,
      pass: () => this.pass(),
      retryMs: this.tuning.pollMs,
      wakeOn: { bus: options.bus, channels: { [PROJECTED_CHANNEL]: rings, [DOORBELL_CHANNEL]: () => true } },
    });
  }

  async start(): Promise<void> {
    await this.loop.start();
    this.options.log.info({ concurrency: this.tuning.concurrency, allow_loopback: this.options.allowLoopback }, 'doorbell worker started');
  }

  wake(): void {
    this.loop.wake();
  }

  /** Fans out what the ledger added, starts what is due while slots are free; resolves with how long to sleep. */
  private async pass(): Promise<number> {
    const { store } = this.options;
    const fanned = await store.fanOut(this.tuning.fanoutBatch);
    const free = this.tuning.concurrency - this.inFlight.size;
    if (free > 0 && !this.loop.stopping) {
      const claimed = await store.claimDue(free, this.tuning.leaseMs);
      // With every slot taken, the next pass comes when one frees up (launch wakes the loop).
      for (const delivery of claimed) this.launch(delivery);
    }
    if (fanned.more || this.loop.woken) return 0;
    if (fanned.locked) return Math.min(this.tuning.pollMs, 50);
    if (this.inFlight.size >= this.tuning.concurrency) return this.tuning.pollMs;
    const due = await store.msUntilNextDue().catch(() => undefined);
    // At least a beat: a row due now that this pass did not get is being claimed by another worker.
    return due === undefined ? this.tuning.pollMs : Math.min(this.tuning.pollMs, Math.max(10, Math.ceil(due)));
  }

  private launch(delivery: ClaimedDelivery): void {
    const controller = new AbortController();
    const running: Promise<void> = this.deliver(delivery, controller.signal)
      .catch((error) => this.options.log.error({ err: error, delivery: delivery.id }, 'doorbell delivery could not be recorded; it is retried when its lease ends'))
      .finally(() => {
        this.inFlight.delete(running);
        this.wake();
      });
    this.inFlight.set(running, controller);
  }

  private async deliver(delivery: ClaimedDelivery, signal: AbortSignal): Promise<void> {
    const { store, log } = this.options;
    if (!delivery.entry) {
      // The read model is being rebuilt: try again shortly, without counting it against the receiver.
      await store.release(delivery, 1_000);
      return;
    }
    let outcome: PostOutcome;
    if (delivery.sealError) {
      outcome = { ok: false, httpStatus: null, error: delivery.sealError, startedAt: Date.now(), durationMs: 0, aborted: false };
    } else {
      const body = Buffer.from(JSON.stringify(deliveryPayload(delivery)), 'utf8');
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'svc-doorbell/1',
        'x-svc-delivery': delivery.id,
        'x-svc-seq': String(delivery.seq),
        'x-svc-kind': delivery.kind,
      };
      if (delivery.secret) headers['x-svc-signature'] = signatureHeader(delivery.signing, delivery.secret, body, Date.now());
      outcome = await postOnce(this.agent, delivery.url, body, headers, { timeoutMs: this.tuning.timeoutMs, signal });
    }
    if (outcome.aborted) {
      await store.release(delivery);
      return;
    }
    if (outcome.detail) {
      // The owner's log says only that the address was refused; what the name resolved to stays here.
      log.warn({ delivery: delivery.id, doorbell: delivery.doorbellId, detail: outcome.detail }, 'doorbell delivery refused: non-public address');
    }
    const backoff = (n: number) => backoffMs(n, this.tuning.backoffBaseMs, this.tuning.backoffMaxMs, this.random);
    const recorded = await store.recordAttempt(delivery, outcome, backoff);
    if (recorded.muted && !outcome.ok && recorded.status !== undefined) log.warn({ doorbell: delivery.doorbellId, failures: recorded.failures }, 'doorbell muted after consecutive failures');
    log.debug({ delivery: delivery.id, doorbell: delivery.doorbellId, seq: delivery.seq, ok: outcome.ok, http_status: outcome.httpStatus, failures: recorded.failures }, 'doorbell attempt');
    try {
      this.options.onAttemptRecorded?.({
        deliveryId: delivery.id,
        doorbellId: delivery.doorbellId,
        seq: delivery.seq,
        attempt: delivery.attempt,
        ok: outcome.ok,
        httpStatus: outcome.httpStatus,
        error: outcome.error,
        status: recorded.status,
        muted: recorded.muted,
        failures: recorded.failures,
      });
    } catch (error) {
      log.warn({ err: error }, 'doorbell onAttemptRecorded hook failed');
    }
  }

  /**
   * Stops looking for work, lets deliveries in flight finish for up to stopGraceMs, then cuts the rest
   * off and gives their rows back (due at once) for another worker or the next start.
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      await this.loop.stop();
      const all = Promise.allSettled([...this.inFlight.keys()]);
      let timer: NodeJS.Timeout | undefined;
      const graceOver = await Promise.race([all.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.tuning.stopGraceMs)))]);
      clearTimeout(timer);
      if (graceOver) {
        for (const controller of this.inFlight.values()) controller.abort();
        await Promise.allSettled([...this.inFlight.keys()]);
      }
      this.agent.destroy();
      this.options.log.info('doorbell worker stopped');
    })();
    return this.stopped;
  }
}

/** Whether a projector notification carries an entry a doorbell rings for (none listed: look anyway). */
function rings(message: Notification): boolean {
  // The fan-out reads the entries read model: an announcement of the others alone has nothing new for it.
  if (!announces(message, ['entries'])) return false;
  const entries = message.entries;
  if (!Array.isArray(entries)) return true;
  return entries.some((entry) => RINGING_KINDS.includes(kindOf(String((entry as { type?: unknown }).type), (entry as { data?: unknown }).data)));
}
