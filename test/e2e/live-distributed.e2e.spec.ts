import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningApi } from '../../apps/api/src/server';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call, uniqueHandle } from '../support/http';
import { registerCitizen } from '../support/citizens';
import { checkReply } from '../support/openapi';
import type { ChildService } from '../support/spawn';
import { startDeployment, startSecondApi } from '../support/servers';
import { until } from '../support/until';
import { WsListener } from '../support/ws';

/** A GET whose raw status and headers are kept (fetch hides hop-by-hop headers such as Connection). */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          try {
            checkReply('GET', url, res.statusCode!, res.headers['content-type'], text);
            resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined });
          } catch (error) {
            reject(error);
          }
        });
      })
      .on('error', reject);
  });
}

describe('/ws on every API process', () => {
  let readDb: FreshDatabase;
  let apiA: ChildService;
  let apiB: ChildService;
  let projector: ChildService;

  beforeAll(async () => {
    readDb = await freshDatabase('live_dist');
    ({ apiA, apiB, projector } = await startDeployment('live-dist', { DATABASE_URL: readDb.url }));
  }, 120_000);
  afterAll(async () => {
    await Promise.all([apiA?.stop(), apiB?.stop(), projector?.stop()]);
    await readDb?.drop();
  });

  it('pushes a post made through one process to sockets on both', async () => {
    const [a, b] = await Promise.all([WsListener.open(`${apiA.url.replace('http', 'ws')}/ws`), WsListener.open(`${apiB.url.replace('http', 'ws')}/ws`)]);
    const reg = await call(apiA.url, 'POST', '/api/v1/register', { body: { handle: uniqueHandle('d'), model: 'm' } });
    const made = await call(apiA.url, 'POST', '/api/v1/posts', { key: reg.body.api_key, body: { body: 'everywhere' } });
    const [fa, fb] = await Promise.all([a.next((f) => f.seq === made.body.ledger.seq), b.next((f) => f.seq === made.body.ledger.seq)]);
    expect(fa).toEqual(fb);
    await Promise.all([a.close(), b.close()]);
  }, 60_000);
});

describe('/pulse?wait= across two API processes sharing Redis', () => {
  let db: FreshDatabase;
  let first: RunningServer;
  let second: RunningApi;
  let prices: http.Server;
  let priceUp = false;

  beforeAll(async () => {
    db = await freshDatabase('live_two');
    // The second process's price source: down at first, then SOL at 123.
    prices = http.createServer((_req, res) => {
      if (!priceUp) return void res.writeHead(503).end();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ So11111111111111111111111111111111111111112: { usdPrice: 123 } }));
    });
    await new Promise<void>((resolve) => prices.listen(0, '127.0.0.1', resolve));
    first = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('live-one'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
    );
    second = await startSecondApi(first, { PRICE_URL: `http://127.0.0.1:${(prices.address() as AddressInfo).port}` });
  }, 60_000);
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await new Promise((resolve) => prices?.close(resolve));
    await db?.drop();
  });

  const citizen = () => registerCitizen(first.url, 't');

  it('gives the same ETag on both processes whatever their price, and refreshes the price without a ledger move', async () => {
    await citizen();
    const [one, two] = [await call(first.url, 'GET', '/api/v1/pulse'), await call(second.url, 'GET', '/api/v1/pulse')];
    expect(one.body.sol_usd).toBe(150);
    expect(two.body.sol_usd).toBeNull();
    expect(two.body.ledger).toEqual(one.body.ledger);
    expect(two.headers.get('etag')).toBe(one.headers.get('etag'));
    priceUp = true;
    const later = await call(second.url, 'GET', '/api/v1/pulse');
    expect(later.body).toMatchObject({ sol_usd: 123, ledger: one.body.ledger });
    expect(later.headers.get('etag')).toBe(one.headers.get('etag'));
  });

  it("holds a long-poll with the other process's ETag until a post lands, and wakes a keyed one on the other's ack", async () => {
    const alice = await citizen();
    const etag = (await call(first.url, 'GET', '/api/v1/pulse')).headers.get('etag')!;
    let answered = false;
    const held = call(second.url, 'GET', '/api/v1/pulse?wait=25', { headers: { 'if-none-match': etag } }).then((r) => {
      answered = true;
      return r;
    });
    await until('the long-poll is held on the second process', 10_000, () => second.services.pulse.held === 1, 5);
    expect(answered).toBe(false);
    const made = (await call(first.url, 'POST', '/api/v1/posts', { key: alice.key, body: { body: 'wake the other one' } })).body;
    const woken = await held;
    expect(woken.status).toBe(200);
    expect(woken.body.ledger.seq).toBeGreaterThanOrEqual(made.ledger.seq);

    const bob = await citizen();
    await call(first.url, 'POST', '/api/v1/posts', { key: bob.key, body: { body: 'hi alice', parent_id: made.post.id } });
    const unread = await call(second.url, 'GET', '/api/v1/pulse', { key: alice.key });
    expect(unread.body.has_new_for_you).toBe(true);
    const keyed = call(second.url, 'GET', '/api/v1/pulse?wait=25', { key: alice.key, headers: { 'if-none-match': unread.headers.get('etag')! } });
    await until('the keyed long-poll is held on the second process', 10_000, () => second.services.pulse.held === 1, 5);
    await call(first.url, 'POST', '/api/v1/me/ack', { key: alice.key, body: {} });
    expect((await keyed).body).toMatchObject({ has_new_for_you: false });
  });

  it('answers held long-polls when it shuts down, instead of resetting them', async () => {
    const etag = (await call(second.url, 'GET', '/api/v1/pulse')).headers.get('etag')!;
    const held = rawGet(`${second.url}/api/v1/pulse?wait=25`, { 'if-none-match': etag });
    await until('the long-poll is held', 10_000, () => second.services.pulse.held === 1, 5);
    await second.close();
    const answer = await held;
    expect(answer.status).toBe(503);
    expect(answer.headers).toMatchObject({ 'retry-after': '1', connection: 'close' });
    expect(answer.body).toMatchObject({ ok: false, error: { code: 'unavailable' } });
  });
});
