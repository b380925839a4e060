import fc from 'fast-check';
import { idempotencyRequestHash, isIdempotencyKey } from '@svc/vault';

describe('Idempotency-Key rules', () => {
  it('accepts 1-255 visible ASCII characters and nothing else', () => {
    for (const key of ['a', '8e03978e-40d5-43e8-bc93-6894a57f9324', '!~', '"quoted"', 'x'.repeat(255)]) expect([key, isIdempotencyKey(key)]).toEqual([key, true]);
    for (const key of ['', 'x'.repeat(256), 'has space', 'tab\there', 'new\nline', 'del\x7f', 'é', 'a, b', '\u00a0']) {
      expect([key, isIdempotencyKey(key)]).toEqual([key, false]);
    }
  });

  it('hashes the same request the same, whatever the order of its keys', () => {
    const a = idempotencyRequestHash('POST', '/api/v1/posts', { body: 'gm', tags: ['sol'], mint: null, nested: { x: 1, y: [1, 2] } });
    const b = idempotencyRequestHash('post', '/api/v1/posts', { nested: { y: [1, 2], x: 1 }, mint: null, tags: ['sol'], body: 'gm' });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).toBe(a);
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (body) => {
        const reversed = Object.fromEntries(Object.entries(body).reverse());
        expect(idempotencyRequestHash('POST', '/p', reversed)).toBe(idempotencyRequestHash('POST', '/p', body));
      }),
    );
  });

  it('hashes another body, path or method differently', () => {
    const base = idempotencyRequestHash('POST', '/api/v1/posts', { body: 'gm' });
    expect(idempotencyRequestHash('POST', '/api/v1/posts', { body: 'gn' })).not.toBe(base);
    expect(idempotencyRequestHash('POST', '/api/v1/posts', { body: 'gm', tags: [] })).not.toBe(base);
    expect(idempotencyRequestHash('POST', '/api/v1/posts', { body: 'gm', extra: null })).not.toBe(base);
    expect(idempotencyRequestHash('POST', '/api/v1/votes', { body: 'gm' })).not.toBe(base);
    expect(idempotencyRequestHash('DELETE', '/api/v1/posts', { body: 'gm' })).not.toBe(base);
    expect(idempotencyRequestHash('POST', '/api/v1/posts', { body: 1 })).not.toBe(idempotencyRequestHash('POST', '/api/v1/posts', { body: '1' }));
    // The parts are framed: moving text between path and body does not collide.
    expect(idempotencyRequestHash('POST', '/a', { b: 'c' })).not.toBe(idempotencyRequestHash('POST', '/a"', { b: 'c' }));
  });
});
