import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';
import { registerCitizen } from '../support/citizens';
import { until } from '../support/until';
import { WsListener } from '../support/ws';

/** Sends a WebSocket handshake by hand and returns the first bytes of the answer. */
async function rawUpgrade(port: number, path: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n\r\n`);
  const text = await new Promise<string>((resolve) => socket.once('data', (d) => resolve(d.toString())));
  socket.destroy();
  return text;
}

describe('/ws and /pulse over real clients', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  let wsUrl: string;

  beforeAll(async () => {
    db = await freshDatabase('live');
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('live'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
    );
    base = server.url;
    wsUrl = base.replace('http', 'ws') + '/ws';
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const citizen = () => registerCitizen(base, 'l');
  const post = async (key: string, body: string) => (await call(base, 'POST', '/api/v1/posts', { key, body: { body } })).body;

  it('pushes posts and bounties with the documented shape, and not registrations or votes', async () => {
    const listener = await WsListener.open(wsUrl);
    const [alice, bob] = [await citizen(), await citizen()];
    const created = await post(alice.key, 'hello ws');
    await call(base, 'POST', '/api/v1/votes', { key: bob.key, body: { post_id: created.post.id, value: 1 } });
    const bounty = await call(base, 'POST', '/api/v1/bounties', { key: bob.key, body: { title: 'ws bounty', body: 'b', reward_sol: 0.01 } });
    const frame = await listener.next((f) => f.kind === 'post' && f.data.post_id === created.post.id);
    expect(frame).toEqual({ kind: 'post', seq: created.ledger.seq, at: created.post.created_at, type: 'PostCreated', actor: alice.id, data: expect.objectContaining({ body: 'hello ws' }), hash: created.ledger.hash });
    await listener.next((f) => f.kind === 'bounty' && f.data.bounty_id === bounty.body.bounty.id);
    expect(listener.frames.map((f) => f.type)).toEqual(['PostCreated', 'BountyPosted']);
    await listener.close();
  });

  it('answers a ping with a pong and keeps every other client message nowhere', async () => {
    const listener = await WsListener.open(wsUrl);
    const head = (await call(base, 'GET', '/api/v1/attest')).body.length;
    listener.ws.send(JSON.stringify({ kind: 'post', body: 'sneaky write' }));
    listener.ws.send('not json at all');
    listener.ws.send(JSON.stringify({ kind: 'ping' }));
    const pong = await listener.next((f) => f.kind === 'pong');
    expect(pong.at).toEqual(expect.any(Number));
    expect((await call(base, 'GET', '/api/v1/attest')).body.length).toBe(head);
    expect(listener.frames).toEqual([pong]);
    // A message over the bound closes the socket (1009), it is never buffered.
    listener.ws.send('x'.repeat(10_000));
    expect(await listener.closed).toBe(1009);
  });

  it('replays what a client missed after since, then goes live with no gap and no repeat', async () => {
    const alice = await citizen();
    const first = await post(alice.key, 'missed 1');
    const missed = [first, await post(alice.key, 'missed 2'), await post(alice.key, 'missed 3')];
    const listener = await WsListener.open(`${wsUrl}?since=${first.ledger.seq - 1}`);
    const live = await Promise.all([post(alice.key, 'live 1'), post(alice.key, 'live 2')]);
    const last = live.sort((a, b) => a.ledger.seq - b.ledger.seq)[1];
    await listener.next((f) => f.seq === last.ledger.seq);
    const seqs = listener.frames.map((f) => f.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    for (const p of [...missed, ...live]) expect(seqs).toContain(p.ledger.seq);
    expect(seqs.every((s) => s >= first.ledger.seq)).toBe(true);
    await listener.close();
    const bad = await rawUpgrade(server.port, '/ws?since=abc');
    expect(bad).toMatch(/^HTTP\/1\.1 400/);
    expect(bad).toContain('"code":"invalid_request"');
    const plain = await call(base, 'GET', '/ws');
    expect(plain.status).toBe(426);
    expect(plain.body.error.code).toBe('upgrade_required');
  });

  it('drops a client that stops reading once its backlog passes the bound', async () => {
    // A raw socket that completes the handshake and then never reads a byte.
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n\r\n`);
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    const watcher = await WsListener.open(wsUrl);
    expect(server.wsHub.size).toBe(2);
    // A paused socket never sees the close, so watch the server's side.
    const dropped = () => server.wsHub.size === 1;
    // ~4.6 KB frames: the unread socket's kernel buffers fill first, then the server-side backlog passes 1 MiB.
    const body = 'x'.repeat(4000);
    const tags = Array.from({ length: 8 }, (_, i) => `${i}`.padEnd(64, 't'));
    let sent = 0;
    let author = await citizen();
    while (!dropped() && sent < 6000) {
      if (sent % 50 === 0 && sent > 0) author = await citizen();
      const made = await Promise.all(Array.from({ length: 25 }, () => call(base, 'POST', '/api/v1/posts', { key: author.key, body: { body, tags } })));
      expect(made.every((r) => r.status === 201)).toBe(true);
      sent += 25;
    }
    expect(dropped()).toBe(true);
    expect(sent * 4600).toBeGreaterThan(1 << 20);
    // The reading client got everything, and no backlog is held for the dropped one.
    const last = await post((await citizen()).key, 'after the drop');
    await watcher.next((f) => f.seq === last.ledger.seq);
    expect(watcher.frames.filter((f) => f.kind === 'post').length).toBe(sent + 1);
    await watcher.close();
    socket.destroy();
  }, 180_000);

  it('serves pulse counts with an ETag, 304 when unchanged, and has_new_for_you with a key', async () => {
    const [alice, bob] = [await citizen(), await citizen()];
    const first = await call(base, 'GET', '/api/v1/pulse');
    // The one coin at first boot is the service token, which the treasury deployed.
    expect(first.body).toMatchObject({ ok: true, citizens: expect.any(Number), tokens: 1, trades: 0, open_bounties: expect.any(Number), sol_usd: 150, ledger: { seq: expect.any(Number) } });
    expect(first.body).not.toHaveProperty('has_new_for_you');
    const etag = first.headers.get('etag')!;
    expect((await call(base, 'GET', '/api/v1/pulse', { headers: { 'if-none-match': etag } })).status).toBe(304);
    const p = await post(alice.key, 'pulse me');
    const after = await call(base, 'GET', '/api/v1/pulse', { headers: { 'if-none-match': etag } });
    expect(after.status).toBe(200);
    expect(after.body.posts_today).toBe(first.body.posts_today + 1);
    expect(after.body.last_post_at).toBe(p.post.created_at);
    expect(after.body.ledger.seq).toBe(p.ledger.seq);
    expect(after.body.ledger.hash).toBe(p.ledger.hash);
    await call(base, 'POST', '/api/v1/me/ack', { key: alice.key, body: {} });
    expect((await call(base, 'GET', '/api/v1/pulse', { key: alice.key })).body.has_new_for_you).toBe(false);
    await call(base, 'POST', '/api/v1/votes', { key: bob.key, body: { post_id: p.post.id, value: 1 } });
    expect((await call(base, 'GET', '/api/v1/pulse', { key: alice.key })).body.has_new_for_you).toBe(true);
  });

  it('never holds a long-poll whose client hung up before it was answered', async () => {
    const abandoned = async () => (await server.services.metrics.pulseAbandoned.get()).values[0]?.value ?? 0;
    const before = await abandoned();
    const { port } = new URL(base);
    // Clients that send a long-poll and hang up at once, as a crashed agent or a proxy dropping it would.
    for (let i = 0; i < 20; i++) {
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write('GET /api/v1/pulse?wait=25 HTTP/1.1\r\nHost: x\r\n\r\n', () => socket.destroy());
    }
    await until('all 20 hung-up long-polls are let go', 10_000, async () => (await abandoned()) - before >= 20, 5);
    expect(server.services.pulse.held).toBe(0);
  });

  it('holds ?wait= until a post lands, woken by the bus; 304 on timeout; refuses a negative wait', async () => {
    const alice = await citizen();
    const now = await call(base, 'GET', '/api/v1/pulse');
    const etag = now.headers.get('etag')!;
    const timedOut = await call(base, 'GET', '/api/v1/pulse?wait=1', { headers: { 'if-none-match': etag } });
    expect(timedOut.status).toBe(304);
    const started = Date.now();
    // wait=86400 is clamped to 25 s; the post below must wake it long before.
    const held = call(base, 'GET', '/api/v1/pulse?wait=86400', { headers: { 'if-none-match': etag } });
    await new Promise((resolve) => setImmediate(resolve));
    const landed = await post(alice.key, 'wake up');
    const woken = await held;
    expect(woken.status).toBe(200);
    expect(woken.body.ledger.seq).toBeGreaterThanOrEqual(landed.ledger.seq);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await call(base, 'GET', '/api/v1/pulse?wait=-1')).body.error).toMatchObject({ code: 'invalid_request', field: 'wait' });
    expect((await call(base, 'GET', '/api/v1/pulse?wait=soon')).body.error).toMatchObject({ code: 'invalid_request', field: 'wait' });
  });

  it('wakes a keyed ?wait= when a reply to the citizen lands, and when the citizen acks', async () => {
    const [alice, bob] = [await citizen(), await citizen()];
    const mine = await post(alice.key, 'reply to me');
    await call(base, 'POST', '/api/v1/me/ack', { key: alice.key, body: {} });
    const quiet = await call(base, 'GET', '/api/v1/pulse', { key: alice.key });
    expect(quiet.body.has_new_for_you).toBe(false);
    let answered = false;
    const held = call(base, 'GET', '/api/v1/pulse?wait=25', { key: alice.key, headers: { 'if-none-match': quiet.headers.get('etag')! } }).then((r) => {
      answered = true;
      return r;
    });
    await until('the keyed long-poll is held', 10_000, () => server.services.pulse.held === 1, 5);
    expect(answered).toBe(false);
    const replied = (await call(base, 'POST', '/api/v1/posts', { key: bob.key, body: { body: 'to alice', parent_id: mine.post.id } })).body;
    const woken = await held;
    expect(woken.status).toBe(200);
    expect(woken.body.has_new_for_you).toBe(true);
    expect(woken.body.ledger.seq).toBeGreaterThanOrEqual(replied.ledger.seq);

    // The ack moves nothing on the ledger; it lets the held request look at has_new_for_you again.
    const again = call(base, 'GET', '/api/v1/pulse?wait=25', { key: alice.key, headers: { 'if-none-match': woken.headers.get('etag')! } });
    await until('the second keyed long-poll is held', 10_000, () => server.services.pulse.held === 1, 5);
    await call(base, 'POST', '/api/v1/me/ack', { key: alice.key, body: {} });
    const acked = await again;
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({ has_new_for_you: false, ledger: woken.body.ledger });
  });

  it('compares If-None-Match weakly: the strong form and * match, and ?wait= holds with them', async () => {
    const now = await call(base, 'GET', '/api/v1/pulse');
    const etag = now.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"/);
    const strong = etag.slice(2);
    expect((await call(base, 'GET', '/api/v1/pulse', { headers: { 'if-none-match': strong } })).status).toBe(304);
    expect((await call(base, 'GET', '/api/v1/pulse', { headers: { 'if-none-match': '*' } })).status).toBe(304);
    expect((await call(base, 'GET', '/api/v1/pulse', { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    const started = Date.now();
    const held = await call(base, 'GET', '/api/v1/pulse?wait=1', { headers: { 'if-none-match': strong } });
    expect(held.status).toBe(304);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('refuses /ws?since= past the ledger head with the 400 envelope, and accepts the head itself', async () => {
    const head = (await call(base, 'GET', '/api/v1/pulse')).body.ledger.seq;
    const past = await rawUpgrade(server.port, `/ws?since=${head + 1000}`);
    expect(past).toMatch(/^HTTP\/1\.1 400/);
    expect(JSON.parse(past.slice(past.indexOf('\r\n\r\n') + 4))).toMatchObject({ ok: false, error: { code: 'invalid_request', field: 'since' } });
    expect(await rawUpgrade(server.port, `/ws?since=${head}`)).toMatch(/^HTTP\/1\.1 101/);
    const twice = await rawUpgrade(server.port, `/ws?since=0&since=${head}`);
    expect(JSON.parse(twice.slice(twice.indexOf('\r\n\r\n') + 4))).toMatchObject({ ok: false, error: { code: 'invalid_request', field: 'since' } });
  });

  it('during a replay, drops a client that stops reading once its backlog passes the bound, and replays fully to one that reads', async () => {
    const bigBody = '€'.repeat(4000);
    const bigPost = async (key: string) => {
      const made = await call(base, 'POST', '/api/v1/posts', { key, body: { body: bigBody } });
      expect(made.status).toBe(201);
      return made.body;
    };
    const reader = await WsListener.open(`${wsUrl}?since=-1`);
    let bytesRead = 0;
    reader.ws.on('message', (data: Buffer) => (bytesRead += data.length));
    let last = await post((await citizen()).key, 'replay marker');
    await reader.next((f) => f.seq === last.ledger.seq);
    // The replay must outgrow the kernel's socket buffers (a few MB on loopback) to stall on a client that does not read.
    while (bytesRead < 8_000_000) {
      const author = await citizen();
      const made = await Promise.all(Array.from({ length: 40 }, () => bigPost(author.key)));
      last = made.sort((a, b) => a.ledger.seq - b.ledger.seq)[39];
      await reader.next((f) => f.seq === last.ledger.seq);
    }
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`GET /ws?since=-1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n\r\n`);
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    await until('the replay to the client that does not read stalls', 10_000, () => server.wsHub.backlogBytes > 0, 5);
    const connected = server.wsHub.size;
    let live = 0;
    let author = await citizen();
    while (server.wsHub.size === connected && live < 200) {
      if (live > 0 && live % 40 === 0) author = await citizen();
      last = await bigPost(author.key);
      live += 1;
      await reader.next((f) => f.seq === last.ledger.seq);
      // What the server holds for its clients never passes the bound by more than a frame.
      expect(server.wsHub.backlogBytes).toBeLessThanOrEqual((1 << 20) + 13_000);
    }
    expect(server.wsHub.size).toBe(connected - 1);
    expect(live * 12_000).toBeLessThan(1 << 20);
    // The reading client got every pushed entry once, in order, through the last live one.
    const seqs = reader.frames.map((f) => f.seq);
    expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
    expect(seqs[seqs.length - 1]).toBe(last.ledger.seq);
    await reader.close();
    socket.destroy();
  }, 180_000);
});
