import { randomUUID } from 'node:crypto';
import { PostgresEventStore, type NewEvent, type StoredEvent } from '@svc/ledger';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

/** Long enough that a subscriber which missed a wake never reads again within a test. */
const NO_FALLBACK_MS = 10 * 60_000;

function events(n: number, tag: string): NewEvent[] {
  return Array.from({ length: n }, (_, i) => ({ id: randomUUID(), type: 'Tested', data: JSON.stringify({ i, tag, text: 'é ✓' }) }));
}

/** Two processes' stores on one database: `mine` subscribes and appends, `theirs` appends in between. */
describe('PostgreSQL event store: live subscribers', () => {
  let db: FreshDatabase;
  const databases: SqlDatabase[] = [];
  let mine: PostgresEventStore;
  let theirs: PostgresEventStore;
  const stream = () => `s-${randomUUID()}`;

  beforeAll(async () => {
    db = await freshDatabase('es_live');
    for (const name of ['mine', 'theirs']) databases.push(await openDatabase({ url: db.url, dataDir: tempDir(`es-live-${name}`) }));
    mine = await new PostgresEventStore(databases[0]!, 'es', NO_FALLBACK_MS).init();
    theirs = await new PostgresEventStore(databases[1]!, 'es', NO_FALLBACK_MS).init();
  }, 60_000);
  afterAll(async () => {
    await mine.close();
    await theirs.close();
    for (const database of databases) await database.close();
    await db.drop();
  });

  /** Feeds each event the subscriber takes to `onEvent` before it asks for the next, until `n` are taken. */
  async function follow(s: string, n: number, onEvent: (event: StoredEvent) => Promise<void>, subscriber = mine): Promise<StoredEvent[]> {
    const controller = new AbortController();
    const taken: StoredEvent[] = [];
    try {
      for await (const event of subscriber.subscribe(s, 0, controller.signal)) {
        taken.push(event);
        await onEvent(event);
        if (taken.length === n) break;
      }
    } finally {
      controller.abort();
    }
    return taken;
  }

  it('wakes for an append made while its consumer still holds the last event it was given', async () => {
    // A third process whose notifications the test hears after the store has: an append's wake, from it or from
    // the other process, then surely comes while the consumer holds the event.
    const database = await openDatabase({ url: db.url, dataDir: tempDir('es-live-held') });
    const heard = new Set<string>();
    const hearing: Array<() => void> = [];
    const listen = database.listen.bind(database);
    database.listen = (channel, onPayload, onListening) =>
      listen(
        channel,
        (payload) => {
          onPayload(payload);
          heard.add(payload);
          for (const wake of hearing.splice(0)) wake();
        },
        onListening,
      );
    const heardOf = async (payload: string) => {
      while (!heard.has(payload)) await new Promise<void>((resolve) => hearing.push(resolve));
    };
    const held = await new PostgresEventStore(database, 'es', NO_FALLBACK_MS).init();
    try {
      for (const writer of [held, theirs]) {
        const s = stream();
        await writer.append(s, events(1, 'before'), 'no_stream');
        const got = await follow(
          s,
          2,
          async (event) => {
            if (event.revision !== 0) return;
            await writer.append(s, events(1, 'while held'), 0);
            await heardOf(`${s}:1`);
          },
          held,
        );
        expect(got.map((e) => JSON.parse(e.data).tag)).toEqual(['before', 'while held']);
      }
    } finally {
      await held.close();
      await database.close();
    }
  }, 20_000);
});
