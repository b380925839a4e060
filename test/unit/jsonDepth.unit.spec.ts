import { bodyValidator, exceedsJsonDepth, MAX_JSON_DEPTH, registerBody } from '@svc/contracts';

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const nested = (levels: number, open = '[', close = ']') => open.repeat(levels) + close.repeat(levels);

describe('the nesting scan over a raw body', () => {
  it('lets through exactly the limit and refuses one level more', () => {
    expect(exceedsJsonDepth(utf8(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(exceedsJsonDepth(utf8(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(exceedsJsonDepth(utf8('{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(exceedsJsonDepth(utf8('[{"a":[{}]}]'), 4)).toBe(false);
    expect(exceedsJsonDepth(utf8('[{"a":[{}]}]'), 3)).toBe(true);
  });

  it('counts depth, not how many containers there are', () => {
    expect(exceedsJsonDepth(utf8(`[${'[],'.repeat(10_000)}[]]`), 2)).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(exceedsJsonDepth(utf8(`{"k":"${'['.repeat(1000)}"}`), 1)).toBe(false);
    expect(exceedsJsonDepth(utf8(`["\\"${'{'.repeat(100)}"]`), 1)).toBe(false);
    expect(exceedsJsonDepth(utf8(`["a\\\\\\"[[[", "[[["]`), 1)).toBe(false);
    // An even run of backslashes escapes itself: the quote after it closes the string, and the bracket counts.
    expect(exceedsJsonDepth(utf8(`["a\\\\", []]`), 1)).toBe(true);
    expect(exceedsJsonDepth(utf8(`["${'\\\\'.repeat(50)}", []]`), 1)).toBe(true);
  });

  it('is not misled by multi-byte characters', () => {
    expect(exceedsJsonDepth(utf8(`["\u{5b22}\u{1f680}\u{7b7b}\u{22}", {"\u05d0": [1]}]`), 3)).toBe(false);
    expect(exceedsJsonDepth(utf8(`[{"\u05d0": [1]}]`), 2)).toBe(true);
  });

  it('treats an unterminated string as running to the end', () => {
    expect(exceedsJsonDepth(utf8(`["${'['.repeat(100)}`), 1)).toBe(false);
  });

  // What it costs is measured by npm run bench:bodies, not here.
  it('answers for 6 MB bodies, deep and wide', () => {
    expect(exceedsJsonDepth(utf8(nested(3_000_000)))).toBe(true);
    expect(exceedsJsonDepth(utf8(`[${'"a\\"[{",'.repeat(600_000)}0]`))).toBe(false);
  });
});

describe('the storability walk over a parsed body', () => {
  const register = bodyValidator(registerBody);

  function deepValue(levels: number, innermost: unknown): unknown {
    let value = innermost;
    for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { k: value };
    return value;
  }

  it('walks 200,000 levels without overflowing the stack', () => {
    expect(() => register({ handle: 'ok', model: 'm', extra: deepValue(200_000, 'fine') })).not.toThrow();
  });

  it('finds a NUL at the bottom of a deep value, with its path', () => {
    const invalid = register({ handle: 'ok', model: 'm', extra: deepValue(4, 'a\u0000') });
    expect(invalid).toEqual({ field: 'extra.0.k.0.k', message: 'extra.0.k.0.k must not contain the NUL character (U+0000)' });
  });

  it('reports the first offender in document order, a key before what it holds', () => {
    expect(register({ handle: 'ok', model: 'm', a: ['ok', { 'b\u0000': 'x\u0000' }], c: '\u0000' })).toMatchObject({ field: 'a.1.b\u0000' });
    expect(register({ handle: 'ok', model: 'm', a: [[], ['\ud800']], c: '\u0000' })).toMatchObject({ field: 'a.1.0' });
  });

  it('walks a __proto__ key as the own property JSON.parse makes of it, and pollutes nothing', () => {
    const body = JSON.parse('{"handle":"ok","model":"m","__proto__":{"polluted":"\\u0000"}}');
    expect(register(body)).toEqual({ field: '__proto__.polluted', message: '__proto__.polluted must not contain the NUL character (U+0000)' });
    const clean = JSON.parse('{"handle":"ok","model":"m","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');
    expect(register(clean)).toBeNull();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(clean)).toBe(Object.prototype);
  });
});
