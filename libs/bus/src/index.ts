import { EventEmitter } from 'node:events';
import Redis from 'ioredis';

/** What the projector announces after a batch commits. `seq` is the ledger position now visible. */
export interface Notification {
  kind: string;
  seq: number;
  [key: string]: unknown;
}

export const PROJECTED_CHANNEL = 'projected';
/** Wakes every doorbell worker at once, e.g. after a replay queued deliveries from an API process. */
export const DOORBELL_CHANNEL = 'doorbells';

export interface BusLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * Publish/subscribe between processes. Delivery is at most once: a gap is recovered through /changes, and a
 * listener that must not miss a change follows the projection checkpoint while the bus is not `healthy`.
 */
export interface Bus {
  readonly kind: 'redis' | 'memory';
  /** False while notifications may be lost: the broker does not answer, or this process is not subscribed. */
  readonly healthy: boolean;
  /** How many notifications this process could not hand to the broker. */
  readonly publishFailures: number;
  /** How many times the bus went down since the process started. */
  readonly outages: number;
  /**
   * Fire and forget: resolves at once and never rejects, whether the broker takes the message or not. A
   * publisher never waits on the broker.
   */
  publish(channel: string, message: Notification): Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(channel: string, handler: (message: Notification) => void): Promise<() => Promise<void>>;
  /** Called with the new state each time the bus goes down or comes back; returns the function that stops it. */
  onHealth(listener: (healthy: boolean) => void): () => void;
  close(): Promise<void>;
}

export class InProcessBus implements Bus {
  readonly kind = 'memory';
  get healthy(): boolean {
    return true;
  }
  readonly publishFailures = 0;
  readonly outages = 0;
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  async publish(channel: string, message: Notification): Promise<void> {
    // Asynchronous like a real broker, so a publisher never runs its subscribers' code inline.
    const copy = JSON.parse(JSON.stringify(message)) as Notification;
    setImmediate(() => this.emitter.emit(channel, copy));
  }

  async subscribe(channel: string, handler: (message: Notification) => void) {
    this.emitter.on(channel, handler);
    return async () => void this.emitter.off(channel, handler);
  }

  onHealth(): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/** Publishes that the broker has not answered yet; past this, new ones are dropped rather than queued. */
const MAX_IN_FLIGHT = 1000;

export class RedisBus implements Bus {
  readonly kind = 'redis';
  private readonly publisher: Redis;
  private subscriber?: Redis;
  /** The subscriber is up once its subscriptions are acknowledged, not merely when it reconnects. */
  private subscriberUp = false;
  private subscriberEverUp = false;
  private publisherEverReady = false;
  private inFlight = 0;
  private failures = 0;
  private downs = 0;
  private wasHealthy = false;
  private closed = false;
  private readonly local = new EventEmitter();
  private readonly health = new EventEmitter();
  private readonly channels = new Map<string, number>();

  /** `prefix` namespaces channels: Redis pub/sub is global to a server, whatever the database number. */
  constructor(
    private readonly url: string,
    private readonly prefix = 'svc',
    private readonly log?: BusLog,
  ) {
    // No offline queue and one try: a message that cannot go now is dropped, never held for a reconnect.
    this.publisher = new Redis(url, { lazyConnect: false, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    this.publisher.on('error', () => undefined);
    this.publisher.on('ready', () => {
      this.publisherEverReady = true;
      this.check();
    });
    this.publisher.on('close', () => this.check());
    this.local.setMaxListeners(0);
    this.health.setMaxListeners(0);
  }

  get healthy(): boolean {
    // A subscriber still making its first connection is a start, not an outage.
    return this.publisher.status === 'ready' && (this.subscriberUp || !this.subscriberEverUp);
  }

  get publishFailures(): number {
    return this.failures;
  }

  get outages(): number {
    return this.downs;
  }

  /** Tells listeners, and the log once, when the bus goes down or comes back. */
  private check(): void {
    if (this.closed) return;
    const healthy = this.healthy;
    if (healthy === this.wasHealthy) return;
    this.wasHealthy = healthy;
    if (!healthy) {
      this.downs += 1;
      this.log?.warn({ bus: 'redis' }, 'bus down: notifications are lost until Redis answers; listeners follow the projection checkpoint');
    } else if (this.downs > 0) {
      this.log?.info({ bus: 'redis', publish_failures: this.failures }, 'bus back');
    }
    this.health.emit('change', healthy);
  }

  async publish(channel: string, message: Notification): Promise<void> {
    // Before the first connection the client queues (a start does not race Redis); after it, nothing is queued.
    const ready = this.publisher.status === 'ready';
    if ((!ready && this.publisherEverReady) || this.inFlight >= MAX_IN_FLIGHT || this.closed) {
      this.failures += 1;
      return;
    }
    this.inFlight += 1;
    this.publisher
      .publish(`${this.prefix}:${channel}`, JSON.stringify(message))
      .catch(() => {
        this.failures += 1;
      })
      .finally(() => {
        this.inFlight -= 1;
      });
  }

  private connectSubscriber(): Redis {
    if (this.subscriber) return this.subscriber;
    const subscriber = new Redis(this.url, { maxRetriesPerRequest: null });
    subscriber.on('error', () => undefined);
    subscriber.on('message', (channel: string, text: string) => {
      let message: Notification;
      try {
        message = JSON.parse(text) as Notification;
      } catch {
        return;
      }
      this.local.emit(channel.slice(this.prefix.length + 1), message);
    });
    subscriber.on('close', () => {
      this.subscriberUp = false;
      this.check();
    });
    // ioredis resubscribes on 'ready'; a PING after that answers once the SUBSCRIBEs before it have been taken.
    subscriber.on('ready', () => {
      subscriber.ping().then(
        () => {
          if (subscriber.status !== 'ready') return;
          this.subscriberUp = true;
          this.subscriberEverUp = true;
          this.check();
        },
        () => undefined,
      );
    });
    this.subscriber = subscriber;
    return subscriber;
  }

  async subscribe(channel: string, handler: (message: Notification) => void) {
    const subscriber = this.connectSubscriber();
    this.local.on(channel, handler);
    const count = this.channels.get(channel) ?? 0;
    this.channels.set(channel, count + 1);
    if (count === 0) {
      const subscribed = subscriber.subscribe(`${this.prefix}:${channel}`);
      // With Redis away the SUBSCRIBE waits in the client's queue for the reconnect; the caller does not.
      if (subscriber.status === 'ready') await subscribed;
      else subscribed.catch(() => undefined);
    }
    return async () => {
      this.local.off(channel, handler);
      const left = (this.channels.get(channel) ?? 1) - 1;
      this.channels.set(channel, left);
      if (left === 0 && subscriber.status === 'ready') await subscriber.unsubscribe(`${this.prefix}:${channel}`).catch(() => undefined);
    };
  }

  onHealth(listener: (healthy: boolean) => void): () => void {
    this.health.on('change', listener);
    return () => void this.health.off('change', listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.health.removeAllListeners();
    this.subscriber?.disconnect();
    if (this.publisher.status === 'ready') await this.publisher.quit().catch(() => this.publisher.disconnect());
    else this.publisher.disconnect();
  }
}

export function createBus(redisUrl: string | undefined, prefix = 'svc', log?: BusLog): Bus {
  return redisUrl ? new RedisBus(redisUrl, prefix, log) : new InProcessBus();
}
