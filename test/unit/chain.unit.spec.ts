import { createHash } from 'node:crypto';
import { GENESIS_HASH, canonicalJson, checkStoredEntry, encodeEntry, entryHash, sealAndEncode, sealEntry } from '@svc/ledger';

describe('the hash chain', () => {
  const first = sealEntry(GENESIS_HASH, { seq: 0, type: 'CitizenRegistered', at: 1700000000000, actor: 'agent_1', data: { handle: 'alice', n: 1.5 } });
  const second = sealEntry(first.hash, { seq: 1, type: 'CitizenRegistered', at: 1700000000001, actor: 'agent_2', data: { handle: 'bob' } });

  it('hashes prev, a newline and the RFC 8785 form of {seq, type, at, actor, data}', () => {
    const expected = createHash('sha256')
      .update(`${GENESIS_HASH}\n{"actor":"agent_1","at":1700000000000,"data":{"handle":"alice","n":1.5},"seq":0,"type":"CitizenRegistered"}`)
      .digest('hex');
    expect(first.hash).toBe(expected);
    expect(second.prev).toBe(first.hash);
  });

  it('canonicalises key order, numbers and escapes as RFC 8785 does', () => {
    expect(canonicalJson({ b: [1e21, 0.1, -0], a: 'é\u2028"' })).toBe('{"a":"é\u2028\\"","b":[1e+21,0.1,0]}');
  });

  it('accepts an entry stored as its canonical bytes', () => {
    const check = checkStoredEntry(encodeEntry(second), 1, first.hash);
    expect(check).toEqual({ ok: true, entry: second });
  });

  it.each([
    ['a changed value', (s: string) => s.replace('"bob"', '"bub"'), 'hash does not match the content'],
    ['added white space', (s: string) => s.replace(':', ': '), 'stored bytes are not the canonical form'],
    ['bytes that are not JSON', (s: string) => s.slice(0, -1), 'stored bytes are not JSON'],
    ['a changed seq', (s: string) => s.replace('"seq":1', '"seq":2'), 'seq 2 stored at revision 1'],
  ])('rejects %s', (_label, tamper, reason) => {
    const check = checkStoredEntry(tamper(encodeEntry(second)), 1, first.hash);
    expect(check).toEqual({ ok: false, reason });
  });

  it('rejects an entry whose prev is not the previous hash', () => {
    const check = checkStoredEntry(encodeEntry(second), 1, GENESIS_HASH);
    expect(check).toEqual({ ok: false, reason: 'prev does not match the previous hash' });
  });

  it('gives a different hash for any change of content', () => {
    const changed = entryHash(GENESIS_HASH, { ...first, data: { handle: 'alice', n: 1.25 } });
    expect(changed).not.toBe(first.hash);
  });
});

describe('sealing and encoding in one pass', () => {
  it.each([
    [{ handle: 'alice', n: 1.5, nested: { z: [1, 'two', null], a: true }, 'ü': 'é\u2028"\\' }],
    [{}],
    [{ big: 1e21, small: 1e-7, neg: -0, unicode: '😀' }],
  ])('gives the same entry and bytes as sealing then encoding: %j', (data) => {
    const unhashed = { seq: 41, type: 'Something"Odd', at: 1700000000123, actor: 'agent_\u0001', data };
    const prev = 'ab'.repeat(32);
    const { entry, bytes } = sealAndEncode(prev, unhashed);
    expect(entry).toEqual(sealEntry(prev, unhashed));
    expect(bytes).toBe(encodeEntry(sealEntry(prev, unhashed)));
    const check = checkStoredEntry(bytes, 41, prev);
    // JSON has no -0: the stored entry reads back as 0, which is the same JSON.
    expect(check.ok && canonicalJson(check.entry)).toBe(canonicalJson(entry));
  });
});
