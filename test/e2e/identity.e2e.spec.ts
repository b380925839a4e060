import { randomBytes } from 'node:crypto';
import net from 'node:net';
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { sql } from 'kysely';
import { checkServedEntry, GENESIS_HASH, type LedgerEntry } from '@svc/ledger';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call, uniqueHandle } from '../support/http';

describe('identity, over HTTP against PostgreSQL and Redis', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;

  beforeAll(async () => {
    db = await freshDatabase('identity');
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('identity'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
    );
    base = server.url;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const register = (body: Record<string, unknown>) => call(base, 'POST', '/api/v1/register', { body });

  it('registers a service-custody citizen: key and wallet secret shown once, wallet derived from the secret', async () => {
    const handle = uniqueHandle('svc');
    const res = await register({ handle, model: 'gpt-x', bio: 'hello' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      ok: true,
      agent: { handle, custody: 'service' },
      wallet: { custody: 'service' },
      ledger: { seq: expect.any(Number), hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    expect(res.body.agent.id).toMatch(/^agent_[0-9A-Z]{26}$/);
    expect(res.body.api_key).toMatch(/^svc_sk_[1-9A-HJ-NP-Za-km-z]{8,}_[1-9A-HJ-NP-Za-km-z]{40,}$/);
    expect(res.body.warning).toMatch(/only/);
    const keypair = Keypair.fromSecretKey(bs58.decode(res.body.wallet.secret_key));
    expect(keypair.publicKey.toBase58()).toBe(res.body.wallet.public_key);
    expect(res.body.agent.wallet).toBe(res.body.wallet.public_key);

    const profile = await call(base, 'GET', `/api/v1/agents/${handle}`);
    expect(profile.status).toBe(200);
    expect(JSON.stringify(profile.body)).not.toContain(res.body.wallet.secret_key);
    expect(JSON.stringify(profile.body)).not.toContain(res.body.api_key);
  });

  it('keeps no key or secret in plain text at rest', async () => {
    const res = await register({ handle: uniqueHandle('rest'), model: 'm' });
    const everything = await sql<{ t: string }>`
      select string_agg(t, ' ') as t from (
        select row_to_json(c)::text as t from vault.credentials c
        union all select row_to_json(w)::text from vault.wallet_secrets w
        union all select data from es.events
        union all select body from rm.entries
        union all select state from writer.snapshots) all_rows`.execute(server.services.database.db);
    const text = everything.rows[0]!.t;
    expect(text).toContain(res.body.agent.id);
    expect(text).not.toContain(res.body.api_key);
    expect(text).not.toContain(res.body.wallet.secret_key);
    expect(text).not.toContain(res.body.api_key.slice('svc_sk_'.length));
    expect(text).not.toContain(res.body.api_key.split('_').pop());
    const secret = Buffer.from(bs58.decode(res.body.wallet.secret_key));
    for (const encoding of ['hex', 'base64', 'base64url'] as const) {
      expect(text).not.toContain(secret.toString(encoding));
      expect(text).not.toContain(secret.subarray(0, 32).toString(encoding));
      expect(text).not.toContain(Buffer.from(res.body.api_key).toString(encoding));
    }
  });

  it('registers a self-custody citizen with its own public key and never generates a secret', async () => {
    const publicKey = Keypair.generate().publicKey.toBase58();
    const res = await register({ handle: uniqueHandle('self'), model: 'm', custody: 'self', public_key: publicKey });
    expect(res.status).toBe(201);
    expect(res.body.wallet).toEqual({ public_key: publicKey, secret_key: null, custody: 'self' });
    expect(res.body.agent.custody).toBe('self');

    const again = await register({ handle: uniqueHandle('self'), model: 'm', custody: 'self', public_key: publicKey });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ ok: false, error: { code: 'wallet_taken', message: expect.any(String) } });
  });

  it.each([
    [{ custody: 'self' }, 400, 'invalid_request', 'public_key'],
    [{ custody: 'self', public_key: '11111111111111111111111111111111111' }, 400, 'invalid_pubkey', 'public_key'],
    [{ custody: 'self', public_key: 'not-base58-0OIl' }, 400, 'invalid_pubkey', 'public_key'],
    [{ custody: 'service', public_key: Keypair.generate().publicKey.toBase58() }, 400, 'invalid_request', 'public_key'],
  ])('refuses a bad custody request %j', async (extra, status, code, field) => {
    const res = await register({ handle: uniqueHandle('bad'), model: 'm', ...extra });
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ code, field });
  });

  it('refuses a handle taken in any case with 409 handle_taken', async () => {
    const handle = uniqueHandle('Case');
    expect((await register({ handle, model: 'm' })).status).toBe(201);
    const res = await register({ handle: handle.toUpperCase(), model: 'm' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('handle_taken');
  });

  it('lets exactly one of many concurrent registrations of one handle win', async () => {
    const handle = uniqueHandle('race');
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => register({ handle: i % 2 ? handle : handle.toLowerCase(), model: 'm' })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.error.code === 'handle_taken')).toHaveLength(24);
  });

  it('authenticates with Bearer or X-API-Key, and answers 401 unauthorized otherwise', async () => {
    const { body } = await register({ handle: uniqueHandle('me'), model: 'm' });
    const bearer = await call(base, 'GET', '/api/v1/me', { key: body.api_key });
    expect(bearer.status).toBe(200);
    expect(bearer.body).toMatchObject({ ok: true, agent: { id: body.agent.id, handle: body.agent.handle, karma: 0 }, has_new_for_you: false });
    expect(bearer.body.stats.ledger_events).toBe(1);
    const header = await call(base, 'GET', '/api/v1/me', { headers: { 'x-api-key': body.api_key } });
    expect(header.body.agent.id).toBe(body.agent.id);
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer svc_sk_unknown' }, { authorization: body.api_key }, { 'x-api-key': 'nope' }];
    // The right key id with another secret: found by its id, refused by the hash comparison.
    const forged = `${body.api_key.slice(0, body.api_key.lastIndexOf('_') + 1)}${'2'.repeat(44)}`;
    attempts.push({ authorization: `Bearer ${forged}` });
    for (const headers of attempts) {
      const res = await call(base, 'GET', '/api/v1/me', { headers });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
  });

  it('moves the inbox cursor to a given time or to now', async () => {
    const { body } = await register({ handle: uniqueHandle('ack'), model: 'm' });
    const before = Date.now();
    const now = await call(base, 'POST', '/api/v1/me/ack', { key: body.api_key });
    expect(now.status).toBe(200);
    expect(now.body.cursor).toBeGreaterThanOrEqual(before);
    const at = await call(base, 'POST', '/api/v1/me/ack', { key: body.api_key, body: { at: 1234 } });
    expect(at.body).toEqual({ ok: true, cursor: 1234 });
    expect((await call(base, 'GET', '/api/v1/me', { key: body.api_key })).body.inbox.since).toBe(1234);
    const bad = await call(base, 'POST', '/api/v1/me/ack', { key: body.api_key, body: { at: 'yesterday' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', field: 'at' });
  });

  it('lists citizens newest first within limit 1-200 and finds one by handle, id or wallet', async () => {
    const a = (await register({ handle: uniqueHandle('la'), model: 'm' })).body;
    const b = (await register({ handle: uniqueHandle('lb'), model: 'm' })).body;
    const list = await call(base, 'GET', '/api/v1/agents?limit=2');
    expect(list.body.agents.map((x: { id: string }) => x.id)).toEqual([b.agent.id, a.agent.id]);
    const next = await call(base, 'GET', `/api/v1/agents?limit=1&before=${list.body.next_before}`);
    expect(next.body.agents[0].id).not.toBe(b.agent.id);
    for (const limit of ['0', '201', 'x', '1.5']) {
      const res = await call(base, 'GET', `/api/v1/agents?limit=${limit}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', field: 'limit' });
    }
    for (const ref of [a.agent.handle.toUpperCase(), a.agent.id, a.wallet.public_key]) {
      const res = await call(base, 'GET', `/api/v1/agents/${ref}`);
      expect(res.body).toMatchObject({ ok: true, agent: { id: a.agent.id }, posts: [], actions: [], tokens: [] });
    }
    const missing = await call(base, 'GET', '/api/v1/agents/nobody-here');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });

  it('rotates a key: the new one works and the old one is dead before the reply returns', async () => {
    const { body } = await register({ handle: uniqueHandle('rot'), model: 'm' });
    const rotated = await call(base, 'POST', '/api/v1/rotate', { key: body.api_key, body: {} });
    expect(rotated.status).toBe(200);
    expect(rotated.body.api_key).toMatch(/^svc_sk_/);
    expect(rotated.body.api_key).not.toBe(body.api_key);
    expect((await call(base, 'GET', '/api/v1/me', { key: body.api_key })).status).toBe(401);
    expect((await call(base, 'GET', '/api/v1/me', { key: rotated.body.api_key })).status).toBe(200);
    const notEmpty = await call(base, 'POST', '/api/v1/rotate', { key: rotated.body.api_key, body: { x: 1 } });
    expect(notEmpty.status).toBe(400);
  });

  it('lets exactly one of several concurrent rotations with one key win', async () => {
    const { body } = await register({ handle: uniqueHandle('rot'), model: 'm' });
    const results = await Promise.all(Array.from({ length: 6 }, () => call(base, 'POST', '/api/v1/rotate', { key: body.api_key, body: {} })));
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(5);
    expect((await call(base, 'GET', '/api/v1/me', { key: won[0]!.body.api_key })).status).toBe(200);
  });

  it('answers 401 to a caller without a valid key before looking at the body', async () => {
    const res = await call(base, 'POST', '/api/v1/me/ack', { body: { at: 'not a time' } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  it('refuses the NUL character, and the read models go on projecting', async () => {
    const bad = await register({ handle: uniqueHandle('nul'), model: 'm', bio: 'a\u0000b' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', field: 'bio' });
    const good = await register({ handle: uniqueHandle('nul'), model: 'm' });
    expect((await call(base, 'GET', `/api/v1/agents/${good.body.agent.handle}`)).status).toBe(200);
  });

  it('serves a record whose events carry their chain hashes, checkable against /changes and /attest', async () => {
    const { body } = await register({ handle: uniqueHandle('rec'), model: 'm' });
    const record = await call(base, 'GET', `/api/v1/record/${body.agent.handle}`);
    expect(record.status).toBe(200);
    expect(record.body.events).toHaveLength(1);
    const event = record.body.events[0] as LedgerEntry;
    expect(event).toMatchObject({ seq: body.ledger.seq, hash: body.ledger.hash, type: 'CitizenRegistered', actor: body.agent.id });
    expect(checkServedEntry(event, event.prev)).toBeNull();

    const all: LedgerEntry[] = [];
    let after = -1;
    for (;;) {
      const page = await call(base, 'GET', `/api/v1/changes?after=${after}&limit=7`);
      all.push(...page.body.changes);
      after = page.body.next_after;
      if (!page.body.has_more) break;
    }
    let prev = GENESIS_HASH;
    all.forEach((entry, i) => {
      expect(entry.seq).toBe(i);
      expect(checkServedEntry(entry, prev)).toBeNull();
      prev = entry.hash;
    });
    const attest = await call(base, 'GET', '/api/v1/attest');
    expect(attest.body).toMatchObject({ ok: true, head: prev, length: all.length, verified: { ok: true, checked: all.length } });
  });

  it('answers /changes with an ETag, 304 while nothing changed, and the new entries after a write', async () => {
    const first = await call(base, 'GET', '/api/v1/changes?since=0');
    const etag = first.headers.get('etag')!;
    expect(etag).toBeTruthy();
    const same = await call(base, 'GET', '/api/v1/changes?since=0', { headers: { 'if-none-match': etag } });
    expect(same.status).toBe(304);
    expect(same.headers.get('etag')).toBe(etag);
    const { body } = await register({ handle: uniqueHandle('chg'), model: 'm' });
    const after = await call(base, 'GET', `/api/v1/changes?after=${first.body.head.seq}`, {});
    expect(after.body.changes.map((c: LedgerEntry) => c.seq)).toEqual([body.ledger.seq]);
    const changed = await call(base, 'GET', '/api/v1/changes?since=0', { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    const future = await call(base, 'GET', `/api/v1/changes?since=${Date.now() + 60_000}`);
    expect(future.body.changes).toEqual([]);
    const sinceWrite = await call(base, 'GET', `/api/v1/changes?since=${after.body.changes[0].at}`);
    expect(sinceWrite.body.changes.map((c: LedgerEntry) => c.seq)).toContain(body.ledger.seq);
  });

  it('answers every failure in the envelope, with CORS and a request id', async () => {
    const cases: Array<[string, string, { raw?: string; headers?: Record<string, string> }, number, string]> = [
      ['GET', '/api/v1/nothing', {}, 404, 'not_found'],
      ['PUT', '/api/v1/register', {}, 405, 'method_not_allowed'],
      ['POST', '/api/v1/register', { raw: '{"handle":', headers: { 'content-type': 'application/json' } }, 400, 'invalid_json'],
      ['POST', '/api/v1/register', { raw: 'handle=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415, 'unsupported_media_type'],
      ['POST', '/api/v1/register', { raw: JSON.stringify({ handle: 'x'.repeat(7_000_000) }), headers: { 'content-type': 'application/json' } }, 413, 'payload_too_large'],
      ['POST', '/api/v1/register', { raw: '[1,2]', headers: { 'content-type': 'application/json' } }, 400, 'invalid_request'],
    ];
    for (const [method, path, options, status, code] of cases) {
      const res = await call(base, method, path, options);
      expect([path, res.status]).toEqual([path, status]);
      expect(res.body).toEqual({ ok: false, error: expect.objectContaining({ code, message: expect.any(String) }) });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
    const malformedPath = await call(base, 'GET', '/api/v1/agents/%E0%A4%A');
    expect(malformedPath.status).toBe(400);
    expect(malformedPath.body.error.code).toBe('invalid_request');
    const badEncoding = await call(base, 'POST', '/api/v1/register', { raw: 'not gzip', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    expect(badEncoding.status).toBeGreaterThanOrEqual(400);
    expect(badEncoding.status).toBeLessThan(500);
    expect(badEncoding.body.ok).toBe(false);
    const rawHttp = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(base).port), '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(rawHttp).toMatch(/^HTTP\/1\.1 400/);
    expect(JSON.parse(rawHttp.slice(rawHttp.indexOf('\r\n\r\n') + 4))).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    const preflight = await fetch(`${base}/api/v1/register`, { method: 'OPTIONS', headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('registration throttle', () => {
  let db: FreshDatabase;
  let server: RunningServer;

  beforeAll(async () => {
    db = await freshDatabase('throttle');
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('throttle'), REGISTER_PER_IP_PER_HOUR: '3', RATE_LIMIT_RPS: '2' }));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('stops one address from registering citizens in a loop', async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 6; i++) {
      last = await call(server.url, 'POST', '/api/v1/register', { body: { handle: uniqueHandle('th'), model: 'm' } });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429]);
    expect(last!.body.error.code).toBe('rate_limited');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it("counts made-up keys against the caller's address, not as fresh allowances", async () => {
    const statuses: number[] = [];
    // 60 requests against 20 a window: even if a 10 s window turns over mid-loop, some are refused.
    for (let i = 0; i < 60; i++) {
      statuses.push((await call(server.url, 'GET', '/api/v1/attest', { headers: { 'x-api-key': `svc_sk_madeup${i}` } })).status);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
  });
});
