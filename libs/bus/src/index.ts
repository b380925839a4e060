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

/** Publish/subscribe between processes. Delivery is at most once: a gap is recovered through /changes. */
export interface Bus {
  readonly kind: 'redis' | 'memory';
  publish(channel: string, message: Notification): Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(channel: string, handler: (message: Notification) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export class InProcessBus implements Bus {
  readonly kind = 'memory';
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

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

export class RedisBus implements Bus {
  readonly kind = 'redis';
  private readonly publisher: Redis;
  private subscriber?: Redis;
  private readonly local = new EventEmitter();
  private readonly channels = new Map<string, number>();

  /** `prefix` namespaces channels: Redis pub/sub is global to a server, whatever the database number. */
  constructor(
    private readonly url: string,
    private readonly prefix = 'svc',
  ) {
    this.publisher = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 3 });
    this.publisher.on('error', () => undefined);
    this.local.setMaxListeners(0);
  }

  async publish(channel: string, message: Notification): Promise<void> {
    await this.publisher.publish(`${this.prefix}:${channel}`, JSON.stringify(message));
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
    this.subscriber = subscriber;
    return subscriber;
  }

  async subscribe(channel: string, handler: (message: Notification) => void) {
    const subscriber = this.connectSubscriber();
    this.local.on(channel, handler);
    const count = this.channels.get(channel) ?? 0;
    this.channels.set(channel, count + 1);
    if (count === 0) await subscriber.subscribe(`${this.prefix}:${channel}`);
    return async () => {
      this.local.off(channel, handler);
      const left = (this.channels.get(channel) ?? 1) - 1;
      this.channels.set(channel, left);
      if (left === 0) await subscriber.unsubscribe(`${this.prefix}:${channel}`).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
    await this.publisher.quit().catch(() => this.publisher.disconnect());
  }
}

export function createBus(redisUrl: string | undefined, prefix = 'svc'): Bus {
  return redisUrl ? new RedisBus(redisUrl, prefix) : new InProcessBus();
}
