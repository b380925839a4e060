import type { LedgerEntry } from './chain';
import type { EventStore, StoredEvent } from './eventStore';

/** The one stream of public events: the hash-chained ledger. */
export const LEDGER_STREAM = 'ledger';

/** Stored entries from `from` on, at most `max`, with the entries they hold. */
export async function readLedger(store: EventStore, from: number, max: number): Promise<Array<{ stored: StoredEvent; entry: LedgerEntry }>> {
  const page = await store.readForward(LEDGER_STREAM, from, max);
  return page.map((stored) => ({ stored, entry: JSON.parse(stored.data) as LedgerEntry }));
}

/** Whether the store holds this head: a state kept elsewhere (a snapshot, a table) is only good for a store that does. */
export async function storeHoldsHead(store: EventStore, seq: number, hash: string): Promise<boolean> {
  const [stored] = await store.readForward(LEDGER_STREAM, seq, 1);
  if (stored?.revision !== seq) return false;
  try {
    return (JSON.parse(stored.data) as LedgerEntry).hash === hash;
  } catch {
    return false;
  }
}
