/**
 * Undo log for decision state. The writer decides a whole batch in place, then either commits it
 * (the append succeeded) or rolls every map back (another writer got there first).
 *
 * When the state is tiered (see stateTier.ts), the maps hold only the keys deciding used lately; the rest
 * live in a table the writer keeps in step with the ledger. Reading a key that is not in memory throws
 * ColdKey: the writer loads it and decides again. The journal also remembers which keys a batch wrote, so
 * the writer can store them in the append's transaction.
 */
export class Journal {
  private undo: Array<() => void> | null = null;
  private readonly written = new Map<JournaledMap<any, any>, Set<unknown>>();
  private readonly maps = new Map<string, JournaledMap<any, any>>();
  /** Whether keys missing from memory may exist in a cold store (reads of them throw ColdKey). */
  tiered = false;
  /**
   * While set, a read of a cold key answers "absent" and is noted here instead of throwing, so that one pass
   * over a batch finds most of the keys it needs; a pass that noted any is rolled back and run again.
   */
  private probe: ColdRead[] | null = null;
  /** While set, every key read is noted here (`tracking`). */
  private reads: Array<[JournaledMap<any, any>, unknown]> | null = null;

  /** Runs `work` noting cold reads instead of throwing; returns them (none: every read was of memory). */
  probing<T>(work: () => T): { result: T; cold: ColdRead[] } {
    const outer = this.probe;
    const cold: ColdRead[] = [];
    this.probe = cold;
    try {
      return { result: work(), cold };
    } finally {
      this.probe = outer;
    }
  }

  /** Runs `work` noting every key it reads, for `wroteAny`. */
  tracking<T>(work: () => T): { result: T; read: ReadKeys } {
    const outer = this.reads;
    const read: Array<[JournaledMap<any, any>, unknown]> = [];
    this.reads = read;
    try {
      return { result: work(), read };
    } finally {
      this.reads = outer;
    }
  }

  /** @internal by JournaledMap: a read of a key, in memory or not. */
  noteRead(map: JournaledMap<any, any>, key: unknown): void {
    this.reads?.push([map, key]);
  }

  /** Whether the open batch wrote any of these keys. */
  wroteAny(read: ReadKeys): boolean {
    return read.some(([map, key]) => this.written.get(map)?.has(key) === true);
  }

  /** @internal by JournaledMap: a read of a key not in memory. */
  missed(map: string, key: unknown): void {
    if (!this.probe) throw new ColdKey(map, String(key));
    this.probe.push({ map, key: String(key) });
  }

  begin(): void {
    this.undo = [];
    this.written.clear();
  }

  commit(): void {
    this.undo = null;
    this.written.clear();
  }

  rollback(): void {
    const undo = this.undo;
    this.undo = null;
    this.written.clear();
    if (undo) for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
  }

  /** A savepoint inside the current batch. */
  mark(): number {
    return this.undo?.length ?? 0;
  }

  /** Undoes the writes made since `mark` (one command's), keeping the batch's earlier ones. */
  rollbackTo(mark: number): void {
    const undo = this.undo;
    if (!undo) return;
    for (let i = undo.length - 1; i >= mark; i--) undo[i]!();
    undo.length = mark;
  }

  record(step: () => void): void {
    this.undo?.push(step);
  }

  /** @internal by JournaledMap */
  wrote(map: JournaledMap<any, any>, key: unknown): void {
    if (!this.undo) return;
    let keys = this.written.get(map);
    if (!keys) this.written.set(map, (keys = new Set()));
    keys.add(key);
  }

  /** @internal by JournaledMap */
  register(map: JournaledMap<any, any>): void {
    if (this.maps.has(map.name)) throw new Error(`two decision-state maps are named ${map.name}`);
    this.maps.set(map.name, map);
  }

  map(name: string): JournaledMap<any, any> | undefined {
    return this.maps.get(name);
  }

  allMaps(): Iterable<JournaledMap<any, any>> {
    return this.maps.values();
  }

  /** What the open batch wrote, as it stands now: `value` undefined means the key was deleted. */
  writes(): StateWrite[] {
    const out: StateWrite[] = [];
    for (const [map, keys] of this.written) {
      for (const key of keys) {
        const held = map.held(key);
        // A write undone by a command's rollback left the key as it was committed: nothing to store.
        if (held.state !== 'cold') out.push({ map: map.name, key: String(key), value: held.state === 'present' ? held.value : undefined });
      }
    }
    return out;
  }

  /** Drops every cached key (another process appended: what is in memory may be stale). */
  forgetAll(): void {
    for (const map of this.maps.values()) map.forgetAll();
  }

  /**
   * Keeps at most `perMap` keys in memory per map, dropping the least recently used, but never one of `pinned`
   * (writes committed here and not yet stored). Only between batches.
   */
  evict(perMap: number, pinned: readonly StateWrite[] = []): void {
    const keep = new Map<string, Set<string>>();
    for (const { map, key } of pinned) {
      let keys = keep.get(map);
      if (!keys) keep.set(map, (keys = new Set()));
      keys.add(key);
    }
    for (const map of this.maps.values()) map.evict(perMap, keep.get(map.name));
  }
}

export interface StateWrite {
  map: string;
  key: string;
  /** undefined: the key no longer exists. */
  value: unknown;
}

/** Keys a piece of work read (`tracking`). */
export type ReadKeys = ReadonlyArray<readonly [JournaledMap<any, any>, unknown]>;

export interface ColdRead {
  map: string;
  key: string;
}

/** A read of a key that is not in memory while the state is tiered, outside a probing pass. */
export class ColdKey extends Error implements ColdRead {
  constructor(
    readonly map: string,
    readonly key: string,
  ) {
    super(`decision state ${map}[${key}] is not in memory`);
  }
}

/** In a tiered map: known not to exist (as opposed to not loaded). */
const ABSENT = Symbol('absent');

/** A Map whose writes can be undone through its journal. Values are replaced, never mutated in place. */
export class JournaledMap<K, V> {
  private readonly map: Map<K, V | typeof ABSENT>;

  constructor(
    private readonly journal: Journal,
    /** Stable across versions: it names the map's rows in the cold store. */
    readonly name: string,
    entries?: Iterable<readonly [K, V]>,
  ) {
    this.map = new Map(entries);
    journal.register(this);
  }

  get(key: K): V | undefined {
    this.journal.noteRead(this, key);
    const value = this.map.get(key);
    if (value === undefined) {
      if (this.journal.tiered) this.journal.missed(this.name, key);
      return undefined;
    }
    if (this.journal.tiered) {
      // Most recently used last: eviction drops from the front.
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value === ABSENT ? undefined : value;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  get size(): number {
    return this.map.size;
  }

  set(key: K, value: V): void {
    this.replace(key, value);
  }

  delete(key: K): void {
    if (!this.journal.tiered && !this.map.has(key)) return;
    this.replace(key, ABSENT);
  }

  private replace(key: K, value: V | typeof ABSENT): void {
    const had = this.map.has(key);
    const before = this.map.get(key);
    // A key written while cold goes back to cold: the store still holds its committed value.
    this.journal.record(() => (had ? this.map.set(key, before!) : this.map.delete(key)));
    this.journal.wrote(this, key);
    if (value === ABSENT && !this.journal.tiered) this.map.delete(key);
    else this.map.set(key, value);
  }

  /** @internal What memory holds for a key. */
  held(key: K): { state: 'present'; value: V } | { state: 'absent' | 'cold' } {
    if (!this.map.has(key)) return { state: 'cold' };
    const value = this.map.get(key)!;
    return value === ABSENT ? { state: 'absent' } : { state: 'present', value };
  }

  /** Caches a committed value read from the cold store (undefined: it does not exist). Not journaled. */
  fill(key: K, value: V | undefined): void {
    if (!this.map.has(key)) this.map.set(key, value === undefined ? ABSENT : value);
  }

  forgetAll(): void {
    this.map.clear();
  }

  evict(keep: number, pinned?: ReadonlySet<string>): void {
    if (this.map.size <= keep) return;
    let drop = this.map.size - keep;
    for (const key of this.map.keys()) {
      if (drop <= 0) break;
      if (pinned?.has(String(key))) continue;
      this.map.delete(key);
      drop -= 1;
    }
  }

  entries(): IterableIterator<[K, V]> {
    return this.present();
  }

  private *present(): IterableIterator<[K, V]> {
    for (const [key, value] of this.map) if (value !== ABSENT) yield [key, value];
  }

  toJSON(): Array<[K, V]> {
    return [...this.present()];
  }
}
