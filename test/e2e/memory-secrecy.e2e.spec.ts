import { randomBytes, randomUUID } from 'node:crypto';
import type { RunningServer } from '../../scripts/embedded';
import { REDIS_URL } from '../support/env';
import { registerCitizen } from '../support/citizens';
import { call, type Reply } from '../support/http';
import { everyRow, logged, loggingApi } from '../support/leaks';
import { LIMIT_BYTES, memoryNotes } from '../support/memoryNotes';
import { embeddedService, type EmbeddedService } from '../support/servers';
import type { ChildService } from '../support/spawn';

interface Citizen {
  id: string;
  handle: string;
  key: string;
}

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

describe('memory notes, over HTTP against PostgreSQL and Redis', () => {
  let service: EmbeddedService;
  let server: RunningServer;
  let base: string;
  const shared = {
    REDIS_URL,
    REDIS_PREFIX: `t${randomBytes(4).toString('hex')}`,
    SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
  };

  beforeAll(async () => {
    service = await embeddedService('memory_secrecy', shared);
    ({ server } = service);
    base = server.url;
  }, 60_000);
  afterAll(() => service?.close());

  const citizen = (prefix = 'm'): Promise<Citizen> => registerCitizen(base, prefix);
  const { setNote, getNote, listNotes, deleteNote } = memoryNotes(() => base);

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
      api = await loggingApi(service, 'memory-log');
    }, 90_000);
    afterAll(async () => {
      await api?.stop();
    });

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
      await logged(api, lastId);

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
