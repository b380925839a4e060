import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { RedisBus } from '@svc/bus';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { registerCitizen, type TestCitizen } from '../support/citizens';
import { percentile, PrivateRedis } from '../support/faults';
import { call, type Reply } from '../support/http';
import { ledgerEntries } from '../support/ledger';
import { until } from '../support/until';

type Phase = 'up' | 'down' | 'back' | 'done';

interface Written {
  id: string;
  seq: number;
  /** The phase the write was answered in. */
  phase: Phase;
  readStatus: number;
  readMs: number;
}

const WRITERS = 4;
/** Posts per citizen before the writer moves to a new one, under the daily cap of 50. */
const POSTS_PER_CITIZEN = 40;

/**
 * Redis killed (SIGKILL) and started again under a steady write load: the bus is a notification that can
 * fail, so writes stay readable at once, /readyz says degraded, /pulse?wait= and /ws follow the checkpoint,
 * and nothing acknowledged is lost.
 */
describe('Redis killed and restarted under write load', () => {
  let db: FreshDatabase;
  let redis: PrivateRedis;
  let server: RunningServer;
  let base: string;

  beforeAll(async () => {
    db = await freshDatabase('redis_outage');
    redis = await PrivateRedis.start();
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL: redis.url, DATA_DIR: tempDir('redis-outage'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
    );
    base = server.url;
  }, 90_000);

  afterAll(async () => {
    await server?.close();
    await redis?.kill();
    await db?.drop();
  });

  it('keeps reads, long-polls and /ws live while Redis is down, reports it, and loses nothing', async () => {
    const busLog = { warn: 0, info: 0 };
    const observer = new RedisBus(redis.url, `t${randomBytes(4).toString('hex')}`, { warn: () => void busLog.warn++, info: () => void busLog.info++ });
    await observer.subscribe('nothing', () => undefined);
    await until('the observing bus to connect', 10_000, () => (observer.healthy ? true : undefined));

    let phase: Phase = 'up';
    const written: Written[] = [];
    const refused: Reply[] = [];
    const frames: Array<{ seq: number; kind: string }> = [];
    const ws = new WebSocket(base.replace('http', 'ws') + '/ws');
    ws.on('message', (data) => frames.push(JSON.parse(data.toString())));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });

    const writer = async (index: number) => {
      let citizen: TestCitizen | undefined;
      let posted = 0;
      while (phase !== 'done') {
        if (!citizen || posted >= POSTS_PER_CITIZEN) {
          citizen = await registerCitizen(base, `ro${index}`);
          posted = 0;
        }
        const post = await call(base, 'POST', '/api/v1/posts', { key: citizen!.key, body: { body: `writer ${index} post ${posted}` } });
        posted += 1;
        if (post.status !== 201) {
          refused.push(post);
          continue;
        }
        const at = phase;
        const started = performance.now();
        const read = await call(base, 'GET', `/api/v1/posts/${post.body.post.id}`);
        written.push({ id: post.body.post.id, seq: post.body.ledger.seq, phase: at, readStatus: read.status, readMs: performance.now() - started });
        // Load shape, not synchronisation: a steady stream rather than as fast as two cores allow.
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    };
    const writers = Array.from({ length: WRITERS }, (_, i) => writer(i));
    const inPhase = (p: Phase) => written.filter((w) => w.phase === p);
    const readyz = async () => (await call(base, 'GET', '/readyz')).body;

    try {
      await until('writes with Redis up', 20_000, () => (inPhase('up').length >= 40 ? true : undefined));
      expect((await readyz()).bus).toBe('ok');

      await redis.kill();
      const killedAt = Date.now();
      phase = 'down';
      const degraded = await until('/readyz to report the bus degraded', 5_000, async () => {
        const body = await readyz();
        return body.bus === 'degraded' ? body : undefined;
      });
      expect(degraded.status).toBe('ready');
      const metricsDown = (await call(base, 'GET', '/metrics')).body as string;
      expect(metricsDown).toMatch(/^svc_bus_up 0$/m);

      // A long-poll held now is woken by the next post, with nothing on the bus.
      const board = await call(base, 'GET', '/api/v1/pulse');
      const polledAt = Date.now();
      const woken = await call(base, 'GET', '/api/v1/pulse?wait=20', { headers: { 'if-none-match': board.headers.get('etag')! } });
      const pulseWakeMs = Date.now() - polledAt;
      expect(woken.status).toBe(200);
      expect(woken.body.ledger.seq).toBeGreaterThan(board.body.ledger.seq);
      expect(pulseWakeMs).toBeLessThan(2_000);

      const headAtKill = Math.max(...written.map((w) => w.seq));
      await until('/ws frames of posts written with Redis down', 10_000, () => (frames.some((f) => f.seq > headAtKill + 20) ? true : undefined));
      await until('writes with Redis down', 20_000, () => (inPhase('down').length >= 60 ? true : undefined));

      await redis.restart();
      const outageMs = Date.now() - killedAt;
      await until('/readyz to report the bus back', 15_000, async () => ((await readyz()).bus === 'ok' ? true : undefined));
      phase = 'back';
      await until('writes with Redis back', 20_000, () => (inPhase('back').length >= 40 ? true : undefined));
      // A long-poll woken through the bus again.
      const again = await call(base, 'GET', '/api/v1/pulse');
      const wokenAgain = await call(base, 'GET', '/api/v1/pulse?wait=20', { headers: { 'if-none-match': again.headers.get('etag')! } });
      expect(wokenAgain.status).toBe(200);

      phase = 'done';
      await Promise.all(writers);

      expect(refused.map((r) => [r.status, r.body?.error?.code])).toEqual([]);
      // Read-your-writes: every citizen's own post reads at once, bus or no bus.
      expect(written.filter((w) => w.readStatus !== 200)).toEqual([]);
      const latency = (p: Phase) => inPhase(p).map((w) => w.readMs);
      const figures = {
        outage_ms: outageMs,
        pulse_wake_ms: pulseWakeMs,
        ryw_up_p50: percentile(latency('up'), 50),
        ryw_up_max: Math.max(...latency('up')),
        ryw_down_p50: percentile(latency('down'), 50),
        ryw_down_p95: percentile(latency('down'), 95),
        ryw_down_max: Math.max(...latency('down')),
        ryw_back_p50: percentile(latency('back'), 50),
        writes: { up: inPhase('up').length, down: inPhase('down').length, back: inPhase('back').length },
      };
      console.log(`redis outage figures ${JSON.stringify(figures)}`);
      expect(figures.ryw_down_max).toBeLessThan(1_000);

      // Nothing acknowledged is missing: on the ledger, in the read models, and pushed on /ws.
      const head = Math.max(...written.map((w) => w.seq));
      const ledger = new Map((await ledgerEntries(base)).map((e) => [e.seq, e]));
      expect(written.filter((w) => ledger.get(w.seq)?.type !== 'PostCreated' || ledger.get(w.seq)?.data.post_id !== w.id)).toEqual([]);
      const reads = await Promise.all(written.map((w) => call(base, 'GET', `/api/v1/posts/${w.id}`)));
      expect(reads.filter((r) => r.status !== 200)).toEqual([]);
      await until('/ws to have pushed every acknowledged post', 10_000, () => (frames.some((f) => f.seq >= head) ? true : undefined));
      const pushed = new Set(frames.map((f) => f.seq));
      expect(written.filter((w) => !pushed.has(w.seq)).map((w) => w.seq)).toEqual([]);
      const seqs = frames.map((f) => f.seq);
      expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));

      const metricsBack = (await call(base, 'GET', '/metrics')).body as string;
      expect(metricsBack).toMatch(/^svc_bus_up 1$/m);
      expect(metricsBack).toMatch(/^svc_bus_outages 1$/m);
      // Logged once when it went down and once when it came back, however long the outage.
      await until('the observing bus to come back', 10_000, () => (observer.healthy ? true : undefined));
      expect(busLog).toEqual({ warn: 1, info: 1 });
    } finally {
      phase = 'done';
      await Promise.allSettled(writers);
      ws.close();
      await observer.close();
    }
  }, 120_000);
});
