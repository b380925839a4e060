import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { decodeTime, isValid } from 'ulid';
import { idempotencyRequestHash, idempotentIds, isIdempotencyKey } from '@svc/vault';

/** Any key: what is tested is how requests compare under one. */
const HASH_KEY = Buffer.alloc(32, 1);

describe('Idempotency-Key rules', () => {
  it('accepts 1-255 visible ASCII characters and nothing else', () => {
    for (const key of ['a', '8e03978e-40d5-43e8-bc93-6894a57f9324', '!~', '"quoted"', 'x'.repeat(255)]) expect([key, isIdempotencyKey(key)]).toEqual([key, true]);
    for (const key of ['', 'x'.repeat(256), 'has space', 'tab\there', 'new\nline', 'del\x7f', 'é', 'a, b', '\u00a0']) {
      expect([key, isIdempotencyKey(key)]).toEqual([key, false]);
    }
  });

  it('hashes the same request the same, whatever the order of its keys', () => {
    const a = idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/posts', { body: 'gm', tags: ['sol'], mint: null, nested: { x: 1, y: [1, 2] } });
    const b = idempotencyRequestHash(HASH_KEY, 'post', '/api/v1/posts', { nested: { y: [1, 2], x: 1 }, mint: null, tags: ['sol'], body: 'gm' });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).toBe(a);
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (body) => {
        const reversed = Object.fromEntries(Object.entries(body).reverse());
        expect(idempotencyRequestHash(HASH_KEY, 'POST', '/p', reversed)).toBe(idempotencyRequestHash(HASH_KEY, 'POST', '/p', body));
      }),
    );
  });

  it('hashes a body RFC 8785 cannot express (a non-finite number) without throwing, apart from every finite one', () => {
    const infinite = idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/transfer', { to: 'bob', amount: Infinity });
    expect(infinite).toMatch(/^[0-9a-f]{64}$/);
    expect(idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/transfer', { to: 'bob', amount: -Infinity })).not.toBe(infinite);
    expect(idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/transfer', { to: 'bob', amount: null })).not.toBe(infinite);
    expect(idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/transfer', { to: 'bob', amount: NaN })).not.toBe(infinite);
  });

  it('keys the hash: another key gives another hash, and no bare hash of the request matches it', () => {
    const request = { method: 'POST', path: '/api/v1/memory', body: { key: 'pin', value: '1234' } };
    const keyed = idempotencyRequestHash(HASH_KEY, request.method, request.path, request.body);
    expect(idempotencyRequestHash(Buffer.alloc(32, 2), request.method, request.path, request.body)).not.toBe(keyed);
    expect(keyed).not.toBe(createHash('sha256').update(canonicalize(request)!).digest('hex'));
  });

  it('hashes another body, path or method differently', () => {
    const base = idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/posts', { body: 'gm' });
    expect(idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/posts', { body: 'gn' })).not.toBe(base);
    expect(idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/posts', { body: 'gm', tags: [] })).not.toBe(base);
    expect(idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/posts', { body: 'gm', extra: null })).not.toBe(base);
    expect(idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/votes', { body: 'gm' })).not.toBe(base);
    expect(idempotencyRequestHash(HASH_KEY, 'DELETE', '/api/v1/posts', { body: 'gm' })).not.toBe(base);
    expect(idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/posts', { body: 1 })).not.toBe(idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/posts', { body: '1' }));
    // The parts are framed: moving text between path and body does not collide.
    expect(idempotencyRequestHash(HASH_KEY, 'POST', '/a', { b: 'c' })).not.toBe(idempotencyRequestHash(HASH_KEY, 'POST', '/a"', { b: 'c' }));
  });

  it('makes the same ids on every attempt of one request, and others for any other request', () => {
    const at = Date.UTC(2026, 10, 25, 13, 0, 0);
    const ids = (key: string, hash = 'h', time = at) => {
      const next = idempotentIds('agent_1', key, hash, time);
      return [next('post_'), next('post_'), next('bounty_')];
    };
    const first = ids('k');
    expect(ids('k')).toEqual(first);
    expect(new Set(first).size).toBe(3);
    for (const id of first) {
      const ulid = id.replace(/^[a-z]+_/, '');
      expect(isValid(ulid)).toBe(true);
      expect(decodeTime(ulid)).toBe(at);
    }
    for (const other of [ids('k2'), ids('k', 'h2'), ids('k', 'h', at + 1)]) for (const [i, id] of other.entries()) expect(id).not.toBe(first[i]);
  });
});
