import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { registerCitizen } from '../support/citizens';
import { call, type Reply } from '../support/http';
import { startChild, type ChildService } from '../support/spawn';

interface Citizen {
  id: string;
  handle: string;
  key: string;
}

interface Note {
  key: string;
  value: string;
  updated_at: number;
}

const LIMIT_BYTES = 16384;

/** A value no other part of the service could produce by chance, so finding it anywhere is a leak. */
function secretValue(label: string): { value: string; marker: string } {
  const marker = `${label}${randomBytes(12).toString('hex')}`;
  return { value: `remember: the launch phrase is ${marker}`, marker };
}

/** Every spelling of a secret a careless writer might store or print. */
function spellings(value: string, marker: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  return [marker, value, bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex'), Buffer.from(marker).toString('base64')];
}

/** Every row of every table outside PostgreSQL's own schemas, as JSON text. */
async function everyRow(db: Kysely<any>): Promise<{ tables: string[]; text: string }> {
  const found = await sql<{ schema: string; name: string }>`
    select table_schema as schema, table_name as name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(db);
  const tables = found.rows.map((t) => `${t.schema}.${t.name}`);
  const parts: string[] = [];
  for (const table of tables) {
    const rows = await sql<{ t: string | null }>`select string_agg(row_to_json(x)::text, ' ') as t from ${sql.table(table)} x`.execute(db);
    parts.push(rows.rows[0]?.t ?? '');
  }
  return { tables, text: parts.join('\n') };
}

describe('memory notes, over HTTP against PostgreSQL and Redis', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  const shared = {
    REDIS_URL,
    REDIS_PREFIX: `t${randomBytes(4).toString('hex')}`,
    SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
  };

  beforeAll(async () => {
    db = await freshDatabase('memory');
    server = await startEmbedded(testConfig({ ...shared, DATABASE_URL: db.url, DATA_DIR: tempDir('memory') }));
    base = server.url;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const citizen = (prefix = 'm'): Promise<Citizen> => registerCitizen(base, prefix);
  const setNote = (key: string | undefined, body: unknown, url = base) => call(url, 'POST', '/api/v1/memory', { key, body });
  const getNote = (key: string | undefined, name: string, url = base) => call(url, 'GET', `/api/v1/memory?key=${encodeURIComponent(name)}`, { key });
  const listNotes = (key: string | undefined, url = base) => call(url, 'GET', '/api/v1/memory', { key });
  const deleteNote = (key: string | undefined, name: string, url = base) => call(url, 'DELETE', `/api/v1/memory?key=${encodeURIComponent(name)}`, { key });

  function expectError(res: Reply, status: number, code: string, field?: string): void {
    expect([res.status, res.body]).toEqual([
      status,
      { ok: false, error: expect.objectContaining({ code, message: expect.any(String), ...(field === undefined ? {} : { field }) }) },
    ]);
  }

  it('stores a note, reads it back by key, and lists every note sorted by key in code-unit order', async () => {
    const me = await citizen();
    const before = Date.now();
    const created = await setNote(me.key, { key: 'plan', value: 'buy low' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ ok: true, key: 'plan', bytes: 7, created: true, updated_at: expect.any(Number) });
    expect(created.body.updated_at).toBeGreaterThanOrEqual(before);
    expect(created.body.updated_at).toBeLessThanOrEqual(Date.now());

    const one = await getNote(me.key, 'plan');
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ ok: true, note: { key: 'plan', value: 'buy low', updated_at: created.body.updated_at } });

    // Stored out of order; '-' < '.' < digits < '_' < letters in code units, which a locale sort would not give.
    for (const name of ['b', 'a_1', 'a1', 'a.1', 'a-1', 'a']) {
      expect((await setNote(me.key, { key: name, value: `value of ${name}` })).body.created).toBe(true);
    }
    const all = await listNotes(me.key);
    expect(all.status).toBe(200);
    expect(Object.keys(all.body).sort()).toEqual(['notes', 'ok']);
    expect(all.body.notes.map((n: Note) => n.key)).toEqual(['a', 'a-1', 'a.1', 'a1', 'a_1', 'b', 'plan']);
    for (const note of all.body.notes as Note[]) {
      expect(note).toEqual({ key: note.key, value: note.key === 'plan' ? 'buy low' : `value of ${note.key}`, updated_at: expect.any(Number) });
    }
  });

  it('replaces the value when the same key is set again, keeping one note', async () => {
    const me = await citizen();
    const first = await setNote(me.key, { key: 'mood', value: 'bullish' });
    const second = await setNote(me.key, { key: 'mood', value: 'bearish, très' });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ ok: true, key: 'mood', bytes: 14, created: false, updated_at: expect.any(Number) });
    expect(second.body.updated_at).toBeGreaterThanOrEqual(first.body.updated_at);
    expect((await getNote(me.key, 'mood')).body.note).toEqual({ key: 'mood', value: 'bearish, très', updated_at: second.body.updated_at });
    expect((await listNotes(me.key)).body.notes).toEqual([{ key: 'mood', value: 'bearish, très', updated_at: second.body.updated_at }]);
  });

  it('deletes a note for good: then it is 404 by key, gone from the list, and a second delete is 404', async () => {
    const me = await citizen();
    await setNote(me.key, { key: 'keep', value: 'stays' });
    await setNote(me.key, { key: 'drop', value: 'goes' });
    const gone = await deleteNote(me.key, 'drop');
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual({ ok: true, key: 'drop', deleted: true });
    expectError(await getNote(me.key, 'drop'), 404, 'not_found');
    expect((await listNotes(me.key)).body.notes.map((n: Note) => n.key)).toEqual(['keep']);
    expectError(await deleteNote(me.key, 'drop'), 404, 'not_found');
    expect((await getNote(me.key, 'keep')).body.note.value).toBe('stays');
    expect(await server.services.database.db.selectFrom('vault.memory_notes').select('id').where('agent_id', '=', me.id).execute()).toHaveLength(1);

    const fresh = await citizen();
    expectError(await deleteNote(fresh.key, 'drop'), 404, 'not_found');
    expectError(await getNote(fresh.key, 'drop'), 404, 'not_found');
    expect((await listNotes(fresh.key)).body).toEqual({ ok: true, notes: [] });
    // Set again after a delete: a new note, not a resurrection of the old one.
    expect((await setNote(me.key, { key: 'drop', value: 'back' })).body.created).toBe(true);
    expect((await getNote(me.key, 'drop')).body.note.value).toBe('back');
  });

  it('accepts a key of 1 to 64 characters of a-z 0-9 _ . -', async () => {
    const me = await citizen();
    for (const name of ['x', 'a'.repeat(64), 'abc-xyz_0.9', '...', '-_-']) {
      const res = await setNote(me.key, { key: name, value: name });
      expect([name, res.status]).toEqual([name, 200]);
      expect((await getNote(me.key, name)).body.note.value).toBe(name);
    }
  });

  it.each([
    ['65 characters', 'a'.repeat(65)],
    ['upper case', 'Plan'],
    ['a space', 'my plan'],
    ['a slash', 'a/b'],
    ['no characters', ''],
    ['non-ASCII', 'plán'],
    ['a colon', 'a:b'],
  ])('refuses a key with %s: 400 invalid_request naming key, on set, get and delete', async (_label, name) => {
    const me = await citizen();
    expectError(await setNote(me.key, { key: name, value: 'v' }), 400, 'invalid_request', 'key');
    expectError(await getNote(me.key, name), 400, 'invalid_request', 'key');
    expectError(await deleteNote(me.key, name), 400, 'invalid_request', 'key');
    expect((await listNotes(me.key)).body.notes).toEqual([]);
  });

  it('refuses a missing or non-string key, and a delete without one', async () => {
    const me = await citizen();
    for (const body of [{ value: 'v' }, { key: 7, value: 'v' }, { key: null, value: 'v' }, { key: ['a'], value: 'v' }]) {
      expectError(await setNote(me.key, body), 400, 'invalid_request', 'key');
    }
    expectError(await call(base, 'DELETE', '/api/v1/memory', { key: me.key }), 400, 'invalid_request', 'key');
    expectError(await call(base, 'GET', '/api/v1/memory?key=a&key=b', { key: me.key }), 400, 'invalid_request', 'key');
    expect((await listNotes(me.key)).body.notes).toEqual([]);
  });

  it('limits the value to 16384 bytes of UTF-8, however many characters that is', async () => {
    const me = await citizen();
    const cases: Array<[string, string, boolean]> = [
      ['ascii-at', 'a'.repeat(LIMIT_BYTES), true],
      ['ascii-over', 'a'.repeat(LIMIT_BYTES + 1), false],
      // é is 2 bytes: 8192 of them are 16384 bytes in 8192 characters.
      ['e-acute-at', 'é'.repeat(LIMIT_BYTES / 2), true],
      ['e-acute-over', `${'é'.repeat(LIMIT_BYTES / 2)}a`, false],
      ['e-acute-far-over', 'é'.repeat(LIMIT_BYTES / 2 + 1), false],
      // An emoji is 4 bytes and 2 UTF-16 units: 4096 of them are 16384 bytes.
      ['emoji-at', '🚀'.repeat(LIMIT_BYTES / 4), true],
      ['emoji-over', `${'🚀'.repeat(LIMIT_BYTES / 4)}a`, false],
      ['emoji-far-over', '🚀'.repeat(LIMIT_BYTES / 4 + 1), false],
      ['euro-at', `${'€'.repeat(5461)}a`, true],
      ['euro-over', '€'.repeat(5462), false],
      ['empty', '', true],
    ];
    for (const [name, value, accepted] of cases) {
      const bytes = Buffer.byteLength(value, 'utf8');
      const res = await setNote(me.key, { key: name, value });
      if (accepted) {
        expect([name, res.status, res.body.bytes]).toEqual([name, 200, bytes]);
        const back = await getNote(me.key, name);
        expect([name, back.body.note.value === value]).toEqual([name, true]);
      } else {
        expect([name, bytes > LIMIT_BYTES]).toEqual([name, true]);
        expectError(res, 400, 'invalid_request', 'value');
        expect(res.body.error.message).toContain(String(LIMIT_BYTES));
        expectError(await getNote(me.key, name), 404, 'not_found');
      }
    }
    expect((await listNotes(me.key)).body.notes.map((n: Note) => n.key)).toEqual(['ascii-at', 'e-acute-at', 'emoji-at', 'empty', 'euro-at']);
  });

  it('keeps an existing note when a replacement is too large', async () => {
    const me = await citizen();
    await setNote(me.key, { key: 'big', value: 'small' });
    expectError(await setNote(me.key, { key: 'big', value: '🚀'.repeat(LIMIT_BYTES / 4 + 1) }), 400, 'invalid_request', 'value');
    expect((await getNote(me.key, 'big')).body.note.value).toBe('small');
  });

  it('refuses a value that is not a string, is missing, or cannot be stored as UTF-8', async () => {
    const me = await citizen();
    for (const value of [42, true, null, { text: 'x' }, ['x']]) {
      expectError(await setNote(me.key, { key: 'typed', value }), 400, 'invalid_request', 'value');
    }
    expectError(await setNote(me.key, { key: 'typed' }), 400, 'invalid_request', 'value');
    expectError(await setNote(me.key, { key: 'typed', value: 'a\u0000b' }), 400, 'invalid_request', 'value');
    const loneSurrogate = await call(base, 'POST', '/api/v1/memory', { key: me.key, raw: '{"key":"typed","value":"a\\ud800b"}', headers: { 'content-type': 'application/json' } });
    expectError(loneSurrogate, 400, 'invalid_request', 'value');
    expect((await listNotes(me.key)).body.notes).toEqual([]);
  });

  it("shows a citizen's notes to that citizen only, and answers 401 without a valid key", async () => {
    const owner = await citizen('own');
    const other = await citizen('oth');
    await setNote(owner.key, { key: 'private', value: 'owner only' });
    await setNote(other.key, { key: 'mine', value: 'other only' });

    expect((await listNotes(other.key)).body.notes).toEqual([{ key: 'mine', value: 'other only', updated_at: expect.any(Number) }]);
    expectError(await getNote(other.key, 'private'), 404, 'not_found');
    expectError(await deleteNote(other.key, 'private'), 404, 'not_found');
    // The same name under another citizen is another note.
    expect((await setNote(other.key, { key: 'private', value: 'not yours' })).body.created).toBe(true);
    expect((await getNote(owner.key, 'private')).body.note.value).toBe('owner only');
    expect((await getNote(other.key, 'private')).body.note.value).toBe('not yours');
    expect((await listNotes(owner.key)).body.notes.map((n: Note) => n.value)).toEqual(['owner only']);

    const forged = `${owner.key.slice(0, owner.key.lastIndexOf('_') + 1)}${'2'.repeat(44)}`;
    for (const key of [undefined, 'svc_sk_unknown', forged]) {
      expectError(await listNotes(key), 401, 'unauthorized');
      expectError(await getNote(key, 'private'), 401, 'unauthorized');
      expectError(await setNote(key, { key: 'private', value: 'overwritten' }), 401, 'unauthorized');
      expectError(await deleteNote(key, 'private'), 401, 'unauthorized');
    }
    const viaHeader = await call(base, 'GET', '/api/v1/memory?key=private', { headers: { 'x-api-key': owner.key } });
    expect(viaHeader.body.note.value).toBe('owner only');
    expect((await getNote(owner.key, 'private')).body.note.value).toBe('owner only');
  });

  it('carries every note over POST /api/v1/rotate: the new key reads them all, the old key is 401', async () => {
    const me = await citizen('rot');
    const values: Record<string, string> = { alpha: 'first', beta: 'é🚀 mixed', gamma: 'x'.repeat(LIMIT_BYTES) };
    for (const [key, value] of Object.entries(values)) expect((await setNote(me.key, { key, value })).status).toBe(200);
    const before = (await listNotes(me.key)).body.notes;
    expect(before).toHaveLength(3);

    const rotated = await call(base, 'POST', '/api/v1/rotate', { key: me.key, body: {} });
    expect(rotated.status).toBe(200);
    const newKey: string = rotated.body.api_key;
    expect(newKey).not.toBe(me.key);

    expect((await listNotes(newKey)).body.notes).toEqual(before);
    for (const [key, value] of Object.entries(values)) expect((await getNote(newKey, key)).body.note.value).toBe(value);
    expectError(await listNotes(me.key), 401, 'unauthorized');
    expectError(await getNote(me.key, 'alpha'), 401, 'unauthorized');
    expectError(await setNote(me.key, { key: 'alpha', value: 'stale key' }), 401, 'unauthorized');
    expectError(await deleteNote(me.key, 'alpha'), 401, 'unauthorized');
    expect((await getNote(newKey, 'alpha')).body.note.value).toBe('first');

    expect((await setNote(newKey, { key: 'delta', value: 'after rotation' })).body.created).toBe(true);
    expect((await setNote(newKey, { key: 'alpha', value: 'replaced after rotation' })).body.created).toBe(false);
    expect((await getNote(newKey, 'delta')).body.note.value).toBe('after rotation');

    // A second rotation re-wraps again: notes from before and after the first both follow.
    const again = (await call(base, 'POST', '/api/v1/rotate', { key: newKey, body: {} })).body.api_key as string;
    const after = (await listNotes(again)).body.notes as Note[];
    expect(after.map((n) => [n.key, n.value])).toEqual([
      ['alpha', 'replaced after rotation'],
      ['beta', values.beta],
      ['delta', 'after rotation'],
      ['gamma', values.gamma],
    ]);
    expectError(await listNotes(newKey), 401, 'unauthorized');
  });

  it('rotates a key of a citizen without notes, and notes set afterwards are read with the new key', async () => {
    const me = await citizen('rot');
    const newKey = (await call(base, 'POST', '/api/v1/rotate', { key: me.key, body: {} })).body.api_key as string;
    expect((await listNotes(newKey)).body).toEqual({ ok: true, notes: [] });
    expect((await setNote(newKey, { key: 'later', value: 'written after' })).status).toBe(200);
    const third = (await call(base, 'POST', '/api/v1/rotate', { key: newKey, body: {} })).body.api_key as string;
    expect((await getNote(third, 'later')).body.note.value).toBe('written after');
  });

  it('keeps note names and values off the ledger and out of every table in plain text', async () => {
    const me = await citizen('leak');
    const { value, marker } = secretValue('valuemark');
    const name = `name.${randomBytes(8).toString('hex')}`;
    const headBefore = (await call(base, 'GET', '/api/v1/attest')).body.length as number;

    expect((await setNote(me.key, { key: name, value })).status).toBe(200);
    expect((await setNote(me.key, { key: 'second', value: `${value} again` })).status).toBe(200);
    expect((await setNote(me.key, { key: 'second', value })).status).toBe(200);
    expect((await getNote(me.key, name)).body.note.value).toBe(value);
    const rotated = (await call(base, 'POST', '/api/v1/rotate', { key: me.key, body: {} })).body.api_key as string;
    expect((await getNote(rotated, 'second')).body.note.value).toBe(value);

    // No memory operation, rotation included, appends to the public ledger.
    expect((await call(base, 'GET', '/api/v1/attest')).body.length).toBe(headBefore);

    const ledger: unknown[] = [];
    for (let after = -1; ; ) {
      const page = await call(base, 'GET', `/api/v1/changes?after=${after}&limit=200`);
      expect(page.status).toBe(200);
      ledger.push(...page.body.changes);
      after = page.body.next_after;
      if (!page.body.has_more) break;
    }
    const record = await call(base, 'GET', `/api/v1/record/${me.handle}`);
    expect(record.status).toBe(200);
    const served = JSON.stringify(ledger) + JSON.stringify(record.body);
    expect(served).toContain(me.id);
    for (const secret of [...spellings(value, marker), name]) expect(served).not.toContain(secret);

    const { tables, text } = await everyRow(server.services.database.db);
    expect(tables).toEqual(expect.arrayContaining(['vault.memory_notes', 'vault.memory_keys', 'rm.entries', 'es.events']));
    expect(text).toContain(me.id);
    const sealed = await server.services.database.db.selectFrom('vault.memory_notes').select('sealed_value').where('agent_id', '=', me.id).execute();
    expect(sealed).toHaveLength(2);
    for (const row of sealed) expect(text).toContain(row.sealed_value);
    for (const secret of [...spellings(value, marker), name, me.key, rotated]) expect(text).not.toContain(secret);
  });

  describe('in the log of an API process', () => {
    let api: ChildService;

    beforeAll(async () => {
      // A service in this process logs to this process's stdout; a child process's output is what a test can read.
      api = await startChild('apps/api/src/main.ts', [], {
        ...shared,
        DATABASE_URL: db.url,
        DATA_DIR: tempDir('memory-log'),
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'debug',
        RATE_LIMIT_RPS: '100000',
        REGISTER_PER_IP_PER_HOUR: '100000',
      });
    }, 90_000);
    afterAll(async () => {
      await api?.stop();
    });

    /** Resolves once the process has logged a line holding `text`, as pino-http does when a response finishes. */
    function logged(text: string): Promise<void> {
      const stream = api.child.stdout!;
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!api.output.some((line) => line.includes(text))) return;
          stream.off('data', check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          stream.off('data', check);
          reject(new Error(`no log line with ${text}`));
        }, 10_000);
        stream.on('data', check);
        check();
      });
    }

    it('never prints a note value in any encoding, nor a note name from the query string', async () => {
      const me = await citizen('log');
      const { value, marker } = secretValue('logmark');
      const name = `diary.${randomBytes(8).toString('hex')}`;
      const tooLarge = `${value}${'é'.repeat(LIMIT_BYTES / 2)}`;
      const requests: Array<() => Promise<Reply>> = [
        () => setNote(me.key, { key: name, value }, api.url),
        () => setNote(me.key, { key: name, value: `${value}!` }, api.url),
        () => setNote(me.key, { key: name, value }, api.url),
        () => getNote(me.key, name, api.url),
        () => listNotes(me.key, api.url),
        () => setNote(me.key, { key: 'Bad Key', value }, api.url),
        () => setNote(me.key, { key: 'big', value: tooLarge }, api.url),
        () => setNote(undefined, { key: name, value }, api.url),
        () => setNote(me.key, { key: 'gone', value }, api.url),
        () => deleteNote(me.key, 'gone', api.url),
      ];
      const statuses: number[] = [];
      for (const send of requests) statuses.push((await send()).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 400, 400, 401, 200, 200]);
      const rotated = await call(api.url, 'POST', '/api/v1/rotate', { key: me.key, body: {} });
      expect(rotated.status).toBe(200);
      const lastId = randomUUID();
      const read = await call(api.url, 'GET', `/api/v1/memory?key=${name}`, { key: rotated.body.api_key, headers: { 'x-request-id': lastId } });
      expect(read.body.note.value).toBe(value);
      await logged(lastId);

      const output = api.output.join('\n');
      // The capture does hold the request lines, so an absence below means something.
      expect(output).toContain('"url":"/api/v1/memory');
      expect(output).toContain('"method":"DELETE","url":"/api/v1/memory?key=[redacted]"');
      for (const secret of [...spellings(value, marker), ...spellings(tooLarge, marker), name, me.key, rotated.body.api_key]) {
        expect(output).not.toContain(secret);
      }
    });
  });
});
