import { agentsQuery, bodyValidator, createPostBody, pulseQuery, queryValidator, registerBody, searchQuery, transferBody } from '@svc/contracts';

describe('request schemas', () => {
  const register = bodyValidator(registerBody);

  it.each([
    [{ model: 'm' }, 'handle', 'handle is required'],
    [{ handle: 'a', model: 'm' }, 'handle', 'handle must NOT have fewer than 2 characters'],
    [{ handle: 'x'.repeat(32), model: 'm' }, 'handle', 'handle must NOT have more than 31 characters'],
    [{ handle: 'bad handle', model: 'm' }, 'handle', 'handle must match pattern "^[A-Za-z0-9_-]+$"'],
    [{ handle: 7, model: 'm' }, 'handle', 'handle must be string'],
    [{ handle: 'ok', model: 'm', bio: 'b'.repeat(401) }, 'bio', 'bio must NOT have more than 400 characters'],
    [{ handle: 'ok', model: 'm', custody: 'bank' }, 'custody', 'custody must be one of "service", "self"'],
  ])('names the offending field of %j', (body, field, message) => {
    expect(register(body)).toEqual({ field, message });
  });

  it('refuses the NUL character anywhere, since PostgreSQL text cannot hold it', () => {
    expect(register({ handle: 'ok', model: 'm', bio: 'a\u0000b' })).toEqual({ field: 'bio', message: 'bio must not contain the NUL character (U+0000)' });
    expect(register({ handle: 'ok', model: 'm', extra: { 'k\u0000': 1 } })).toMatchObject({ field: 'extra.k\u0000' });
  });

  it('refuses a lone UTF-16 surrogate anywhere, since jsonb and RFC 8785 cannot hold it', () => {
    const post = bodyValidator(createPostBody);
    expect(post({ body: 'ok', tags: ['\udc00'] })).toEqual({ field: 'tags.0', message: 'tags.0 must be well-formed Unicode (it holds a lone UTF-16 surrogate)' });
    expect(post({ body: 'a\ud800b' })).toMatchObject({ field: 'body' });
    expect(register({ handle: 'ok', model: 'm', extra: { 'k\udfff': 1 } })).toMatchObject({ field: 'extra.k\udfff' });
    // A paired surrogate is an ordinary astral character.
    expect(post({ body: 'to the moon \ud83d\ude80' })).toBeNull();
  });

  it('fills defaults for what was left out', () => {
    const body: Record<string, unknown> = { handle: 'ok', model: 'm' };
    expect(register(body)).toBeNull();
    expect(body).toEqual({ handle: 'ok', model: 'm', bio: '', custody: 'service' });
  });

  it('reads query numbers from text and bounds them', () => {
    const query = queryValidator(agentsQuery);
    const ok: Record<string, unknown> = { limit: '200' };
    expect(query(ok)).toBeNull();
    expect(ok.limit).toBe(200);
    expect(query({ limit: '0' })).toEqual({ field: 'limit', message: 'limit must be >= 1' });
    expect(query({ limit: 'ten' })).toEqual({ field: 'limit', message: 'limit must be an integer in decimal digits' });
    // '1e309' reads as Infinity, which JSON Schema's integer check lets through; the bound must not.
    expect(query({ before: '1e309' })).toMatchObject({ field: 'before' });
  });

  // ajv coerces with Number(), which reads far more than decimal digits.
  it.each(['0x10', '0b1', '0o7', '1e3', ' 5', '5 ', '5.0', '+5', '', 'Infinity', '-', '1_000'])('refuses the integer %j, which is not decimal digits', (text) => {
    expect(queryValidator(agentsQuery)({ limit: text })).toEqual({ field: 'limit', message: 'limit must be an integer in decimal digits' });
  });

  it.each(['0x10', '1e3', ' 5', '.5', '5.', 'Infinity', 'NaN', '-0x1', '1,5'])('refuses the number %j, which is not plain decimal', (text) => {
    expect(queryValidator(pulseQuery)({ wait: text })).toEqual({ field: 'wait', message: 'wait must be a number in plain decimal notation (e.g. 12 or 0.5)' });
  });

  it('reads plain decimals as before', () => {
    const integers: Record<string, unknown> = { limit: '007', before: '-0' };
    expect(queryValidator(agentsQuery)(integers)).toBeNull();
    expect(integers).toMatchObject({ limit: 7, before: -0 });
    const numbers: Record<string, unknown> = { wait: '2.5' };
    expect(queryValidator(pulseQuery)(numbers)).toBeNull();
    expect(numbers.wait).toBe(2.5);
    expect(queryValidator(pulseQuery)({ wait: '25' })).toBeNull();
    // A number from a JSON caller (an MCP tool call) is not text to be read.
    expect(queryValidator(agentsQuery)({ limit: 10 })).toBeNull();
  });

  // JSON text reads 1e309 as Infinity, which no hash, column or JSON reply can hold.
  it.each([Infinity, -Infinity, NaN])('refuses the number %p wherever it stands, before anything hashes it', (number) => {
    const transfer = bodyValidator(transferBody);
    expect(transfer({ to: 'alice', amount: number })).toEqual({ field: 'amount', message: 'amount must be a finite number' });
    expect(register({ handle: 'ok', model: 'm', extra: { deep: [1, number] } })).toEqual({ field: 'extra.deep.1', message: 'extra.deep.1 must be a finite number' });
    expect(bodyValidator({ type: 'object' })(number)).toEqual({ field: '', message: 'body must be a finite number' });
    expect(queryValidator(agentsQuery)({ before: number })).toEqual({ field: 'before', message: 'before must be a finite number' });
    expect(queryValidator(searchQuery)({ q: 'abc', stray: number })).toMatchObject({ field: 'stray' });
  });

  it('takes a typed value (an MCP argument) as it is, where text is read as its property says', () => {
    const search = queryValidator(searchQuery);
    expect(search({ q: 12345 })).toEqual({ field: 'q', message: 'q must be string' });
    expect(search({ q: true })).toEqual({ field: 'q', message: 'q must be string' });
    expect(search({ q: 'abc', limit: '5' })).toBeNull();
    const agents = queryValidator(agentsQuery);
    expect(agents({ limit: true })).toEqual({ field: 'limit', message: 'limit must be integer' });
    expect(agents({ before: null })).toEqual({ field: 'before', message: 'before must be integer' });
    expect(agents({ limit: 201 })).toEqual({ field: 'limit', message: 'limit must be <= 200' });
    const typed: Record<string, unknown> = { limit: 7 };
    expect(agents(typed)).toBeNull();
    expect(typed).toEqual({ limit: 7 });
  });
});
