import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** `prev` of the first entry. */
export const GENESIS_HASH = '0'.repeat(64);

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One link of the public hash chain. `seq` is the ledger stream revision, 0-based and gapless. */
export interface LedgerEntry<T extends string = string, D = Record<string, unknown>> {
  seq: number;
  type: T;
  /** Milliseconds since the epoch. */
  at: number;
  /** The agent id who acted, or a service principal such as `@treasury`. */
  actor: string;
  data: D;
  prev: string;
  hash: string;
}

export type UnhashedEntry = Pick<LedgerEntry, 'seq' | 'type' | 'at' | 'actor' | 'data'>;

/** RFC 8785 (JCS) canonical JSON. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value has no JSON form');
  return text;
}

/** hash = sha256_hex(prev + "\n" + JCS({seq, type, at, actor, data})) — the construction /attest publishes. */
export function entryHash(prev: string, entry: UnhashedEntry): string {
  const body = canonicalJson({ seq: entry.seq, type: entry.type, at: entry.at, actor: entry.actor, data: entry.data });
  return createHash('sha256').update(prev).update('\n').update(body).digest('hex');
}

export function sealEntry(prev: string, entry: UnhashedEntry): LedgerEntry {
  return { ...entry, prev, hash: entryHash(prev, entry) } as LedgerEntry;
}

/**
 * Seals an entry and gives its stored bytes, canonicalising each part once: the hashed body and the
 * stored entry share every member but `prev` and `hash`. Keys are fixed ASCII, so their RFC 8785
 * order is plain sorting: actor, at, data, (hash), (prev), seq, type.
 */
export function sealAndEncode(prev: string, entry: UnhashedEntry): { entry: LedgerEntry; bytes: string } {
  const actor = `"actor":${canonicalJson(entry.actor)}`;
  const at = `"at":${canonicalJson(entry.at)}`;
  const data = `"data":${canonicalJson(entry.data)}`;
  const seq = `"seq":${canonicalJson(entry.seq)}`;
  const type = `"type":${canonicalJson(entry.type)}`;
  const body = `{${actor},${at},${data},${seq},${type}}`;
  const hash = createHash('sha256').update(prev).update('\n').update(body).digest('hex');
  const bytes = `{${actor},${at},${data},"hash":"${hash}","prev":${canonicalJson(prev)},${seq},${type}}`;
  return { entry: { ...entry, prev, hash } as LedgerEntry, bytes };
}

/** The bytes the event store keeps for an entry: its canonical JSON, so any changed byte is detectable. */
export function encodeEntry(entry: LedgerEntry): string {
  return canonicalJson(entry);
}

export type EntryCheck = { ok: true; entry: LedgerEntry } | { ok: false; reason: string };

/**
 * Verifies one stored entry against its position and the hash before it, on the stored bytes,
 * before anything else reads them.
 */
export function checkStoredEntry(stored: string, revision: number, prev: string): EntryCheck {
  let entry: LedgerEntry;
  try {
    entry = JSON.parse(stored) as LedgerEntry;
  } catch {
    return { ok: false, reason: 'stored bytes are not JSON' };
  }
  if (entry === null || typeof entry !== 'object') return { ok: false, reason: 'stored entry is not an object' };
  let canonical: string;
  try {
    canonical = canonicalJson(entry);
  } catch {
    return { ok: false, reason: 'stored entry has no canonical form' };
  }
  if (canonical !== stored) return { ok: false, reason: 'stored bytes are not the canonical form' };
  if (entry.seq !== revision) return { ok: false, reason: `seq ${entry.seq} stored at revision ${revision}` };
  if (entry.prev !== prev) return { ok: false, reason: 'prev does not match the previous hash' };
  if (entryHash(prev, entry) !== entry.hash) return { ok: false, reason: 'hash does not match the content' };
  return { ok: true, entry };
}

/** Verifies entries as served by the public API (parsed JSON), e.g. from /changes. */
export function checkServedEntry(entry: LedgerEntry, prev: string): string | null {
  if (entry.prev !== prev) return 'prev does not match the previous hash';
  if (entryHash(prev, entry) !== entry.hash) return 'hash does not match the content';
  return null;
}

export type LinkCheck =
  | { ok: true; hash: string }
  | { ok: false; reason: string; expected_hash?: string; stored_hash?: string };

const HASH_MEMBER = ',"hash":"';
const PREV_MEMBER = '","prev":"';

/**
 * Verifies one stored entry with one sha256 and no JSON parsing, for passes over the whole chain. The stored
 * bytes are the hashed body with `"hash"` and `"prev"` spliced in before `"seq"` (RFC 8785 orders the keys
 * actor, at, data, hash, prev, seq, type), so cutting them out gives back the body. When that body hashes to
 * the stored hash with the expected prev, every stored byte is the one the writer sealed; bytes of any other
 * layout go to checkStoredEntry, which says what is wrong with them.
 */
export function checkStoredLink(stored: string, revision: number, prev: string): LinkCheck {
  // Searched from the end: `data` may hold a key "hash" of its own, but nothing after the top-level one can.
  const at = stored.lastIndexOf(HASH_MEMBER);
  const hashStart = at + HASH_MEMBER.length;
  const prevStart = hashStart + 64 + PREV_MEMBER.length;
  const restStart = prevStart + 64 + 2;
  if (
    at < 0 ||
    !stored.startsWith(PREV_MEMBER, hashStart + 64) ||
    !stored.startsWith('",', prevStart + 64) ||
    !stored.startsWith('"seq":', restStart)
  ) {
    const check = checkStoredEntry(stored, revision, prev);
    return check.ok ? { ok: true, hash: check.entry.hash } : check;
  }
  if (!stored.startsWith(`"seq":${revision},"type":"`, restStart)) return { ok: false, reason: `the entry stored at revision ${revision} names another seq` };
  const storedPrev = stored.slice(prevStart, prevStart + 64);
  if (storedPrev !== prev) return { ok: false, reason: 'prev does not match the previous hash', expected_hash: prev, stored_hash: storedPrev };
  const storedHash = stored.slice(hashStart, hashStart + 64);
  const body = `${stored.slice(0, at)},${stored.slice(restStart)}`;
  const hash = createHash('sha256').update(`${prev}\n${body}`).digest('hex');
  if (hash !== storedHash) return { ok: false, reason: 'hash does not match the content', expected_hash: hash, stored_hash: storedHash };
  return { ok: true, hash };
}
