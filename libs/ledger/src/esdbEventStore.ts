import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  ANY,
  StreamNotFoundError,
  WrongExpectedVersionError,
  binaryEvent,
  type AppendExpectedRevision,
} from '@eventstore/db-client';
import { type AppendOptions,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type StoredEvent,
  WrongExpectedRevisionError,
} from './eventStore';

const decoder = new TextDecoder('utf-8', { fatal: false });

/** The event store on EventStoreDB (production). Events are kept as exact bytes (binary events). */
export class EsdbEventStore implements EventStore {
  readonly kind = 'esdb';
  private readonly client: EventStoreDBClient;

  constructor(connectionString: string) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision, options: AppendOptions = {}): Promise<AppendResult> {
    if (options.alongside) throw new Error('EventStoreDB has no transaction to run work alongside an append in');
    const expectedRevision: AppendExpectedRevision =
      expected === 'any' ? ANY : expected === 'no_stream' ? NO_STREAM : BigInt(expected);
    try {
      const result = await this.client.appendToStream(
        stream,
        events.map((e) => binaryEvent({ id: e.id, type: e.type, data: Buffer.from(e.data, 'utf8') })),
        { expectedRevision },
      );
      // EventStoreDB answers an idempotent re-append with the revision it already had.
      return { nextRevision: Number(result.nextExpectedRevision), duplicate: false };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion;
        throw new WrongExpectedRevisionError(stream, expected, typeof actual === 'bigint' ? Number(actual) : 'no_stream');
      }
      throw error;
    }
  }

  async readForward(stream: string, from: number, maxCount: number): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(stream, {
        fromRevision: BigInt(Math.max(0, from)),
        direction: FORWARDS,
        maxCount: BigInt(maxCount),
      })) {
        if (resolved.event) out.push(toStored(stream, resolved.event));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return out;
  }

  async headRevision(stream: string): Promise<number> {
    try {
      for await (const resolved of this.client.readStream(stream, { fromRevision: END, direction: BACKWARDS, maxCount: 1n })) {
        if (resolved.event) return Number(resolved.event.revision);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return -1;
      throw error;
    }
    return -1;
  }

  async *subscribe(stream: string, from: number, signal: AbortSignal): AsyncIterable<StoredEvent> {
    let next = from;
    // Catch up by reading, then go live from the last revision seen. Whether the server treats the
    // subscription start as inclusive or exclusive, revisions below `next` are skipped, so none repeats.
    for (;;) {
      if (signal.aborted) return;
      const batch = await this.readForward(stream, next, 500);
      for (const event of batch) {
        yield event;
        next = event.revision + 1;
      }
      if (batch.length < 500) break;
    }
    const subscription = this.client.subscribeToStream(stream, {
      fromRevision: next === 0 ? 'start' : BigInt(next - 1),
    });
    const stop = () => void subscription.unsubscribe();
    signal.addEventListener('abort', stop);
    try {
      for await (const resolved of subscription) {
        if (!resolved.event) continue;
        const event = toStored(stream, resolved.event);
        if (event.revision < next) continue;
        yield event;
        next = event.revision + 1;
      }
    } finally {
      signal.removeEventListener('abort', stop);
      await subscription.unsubscribe().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}

function toStored(
  stream: string,
  event: { id: string; revision: bigint; type: string; data: unknown; isJson: boolean },
): StoredEvent {
  const data = event.isJson ? JSON.stringify(event.data) : decoder.decode(event.data as Uint8Array);
  return { id: event.id, stream, revision: Number(event.revision), type: event.type, data };
}
