import fc from 'fast-check';
import { GENESIS_HASH, checkStoredEntry, checkStoredLink, sealAndEncode, type Json } from '@svc/ledger';

// The full pass checks stored bytes with one sha256 and no parsing (checkStoredLink); it must accept and
// refuse exactly what the parsing check (checkStoredEntry) does.

const entries = fc.record({
  seq: fc.nat({ max: 1_000_000 }),
  type: fc.string({ minLength: 1, maxLength: 20 }),
  at: fc.nat(),
  actor: fc.string({ maxLength: 20 }),
  // Keys named like the entry's own members, to prove the search for them is not fooled.
  data: fc.dictionary(fc.constantFrom('hash', 'prev', 'seq', 'type', 'x', 'é', '"'), fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>),
});

describe('checking a stored link without parsing it', () => {
  it('accepts every sealed entry, and gives the hash it was sealed with', () => {
    fc.assert(
      fc.property(entries, fc.constantFrom(GENESIS_HASH, 'ab'.repeat(32)), (entry, prev) => {
        const sealed = sealAndEncode(prev, entry);
        expect(checkStoredLink(sealed.bytes, entry.seq, prev)).toEqual({ ok: true, hash: sealed.entry.hash });
      }),
    );
  });

  it('refuses whatever the parsing check refuses: any changed, added or removed character', () => {
    fc.assert(
      fc.property(entries, fc.nat(), fc.char(), fc.constantFrom('replace', 'insert', 'delete'), (entry, where, char, how) => {
        const { bytes } = sealAndEncode(GENESIS_HASH, entry);
        const at = where % bytes.length;
        const changed =
          how === 'replace' ? bytes.slice(0, at) + char + bytes.slice(at + 1) : how === 'insert' ? bytes.slice(0, at) + char + bytes.slice(at) : bytes.slice(0, at) + bytes.slice(at + 1);
        const fast = checkStoredLink(changed, entry.seq, GENESIS_HASH);
        expect(fast.ok).toBe(checkStoredEntry(changed, entry.seq, GENESIS_HASH).ok);
        if (changed !== bytes) expect(fast.ok).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('names the broken link and the changed content with both hashes', () => {
    const first = sealAndEncode(GENESIS_HASH, { seq: 0, type: 'T', at: 1, actor: 'a', data: { n: 1 } });
    const second = sealAndEncode(first.entry.hash, { seq: 1, type: 'T', at: 2, actor: 'b', data: { n: 2 } });
    expect(checkStoredLink(second.bytes, 1, GENESIS_HASH)).toEqual({
      ok: false,
      reason: 'prev does not match the previous hash',
      expected_hash: GENESIS_HASH,
      stored_hash: first.entry.hash,
    });
    const changed = checkStoredLink(second.bytes.replace('"n":2', '"n":3'), 1, first.entry.hash);
    expect(changed).toMatchObject({ ok: false, reason: 'hash does not match the content', stored_hash: second.entry.hash });
    expect(checkStoredLink(second.bytes, 2, first.entry.hash)).toMatchObject({ ok: false, reason: 'the entry stored at revision 2 names another seq' });
  });
});
