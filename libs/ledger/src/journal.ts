/**
 * Undo log for decision state. The writer decides a whole batch in place, then either commits it
 * (the append succeeded) or rolls every map back (another writer got there first).
 */
export class Journal {
  private undo: Array<() => void> | null = null;

  begin(): void {
    this.undo = [];
  }

  commit(): void {
    this.undo = null;
  }

  rollback(): void {
    const undo = this.undo;
    this.undo = null;
    if (undo) for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
  }

  record(step: () => void): void {
    this.undo?.push(step);
  }
}

/** A Map whose writes can be undone through its journal. Values are replaced, never mutated in place. */
export class JournaledMap<K, V> {
  private readonly map: Map<K, V>;

  constructor(
    private readonly journal: Journal,
    entries?: Iterable<readonly [K, V]>,
  ) {
    this.map = new Map(entries);
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  get size(): number {
    return this.map.size;
  }

  set(key: K, value: V): void {
    const had = this.map.has(key);
    const before = this.map.get(key);
    this.journal.record(() => (had ? this.map.set(key, before as V) : this.map.delete(key)));
    this.map.set(key, value);
  }

  delete(key: K): void {
    if (!this.map.has(key)) return;
    const before = this.map.get(key) as V;
    this.journal.record(() => this.map.set(key, before));
    this.map.delete(key);
  }

  entries(): IterableIterator<[K, V]> {
    return this.map.entries();
  }

  toJSON(): Array<[K, V]> {
    return [...this.map.entries()];
  }
}
