import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, PG_ADMIN_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { ledgerEntries } from '../support/ledger';
import { until } from '../support/until';
import { call, uniqueHandle, type Reply } from '../support/http';

type Phase = 'before' | 'cutting' | 'after' | 'done';

const WRITERS = 4;
const POSTS_PER_CITIZEN = 40;
const CUT_FOR_MS = 4_000;

/**
 * Every connection to the service's database cut (pg_terminate_backend), again and again for a few seconds,
 * under a steady write load: replies are 2xx or 503 `unavailable` with Retry-After, never a 500; then the
 * service recovers on its own, and every write it acknowledged is on the ledger and in the read models.
 */
describe('PostgreSQL connections cut under write load', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;

  beforeAll(async () => {
    db = await freshDatabase('pg_outage');
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, DATA_DIR: tempDir('pg-outage'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }));
    base = server.url;
  }, 90_000);

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('answers 2xx or 503 unavailable while it lasts, recovers without a restart, and loses no acknowledged write', async () => {
    let phase: Phase = 'before';
    const acknowledged: Array<{ id: string; seq: number; phase: Phase }> = [];
    const replies: Array<{ what: string; phase: Phase; reply: Reply }> = [];
    const record = (what: string, reply: Reply) => {
      replies.push({ what, phase, reply });
      return reply;
    };

    const writer = async (index: number) => {
      let key: string | undefined;
      let posted = 0;
      while (phase !== 'done') {
        if (!key || posted >= POSTS_PER_CITIZEN) {
          const reg = record('register', await call(base, 'POST', '/api/v1/register', { body: { handle: uniqueHandle(`po${index}`), model: 'm' } }));
          if (reg.status === 201) {
            key = reg.body.api_key;
            posted = 0;
          }
          continue;
        }
        const post = record('post', await call(base, 'POST', '/api/v1/posts', { key, body: { body: `writer ${index} post ${posted}` } }));
        posted += 1;
        if (post.status === 201) {
          acknowledged.push({ id: post.body.post.id, seq: post.body.ledger.seq, phase });
          record('read', await call(base, 'GET', `/api/v1/posts/${post.body.post.id}`));
        }
        record('pulse', await call(base, 'GET', '/api/v1/pulse'));
        // Load shape, not synchronisation: a steady stream rather than as fast as two cores allow.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const writers = Array.from({ length: WRITERS }, (_, i) => writer(i));
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    let terminated = 0;
    try {
      await until('writes before the cut', 20_000, () => (acknowledged.length >= 30 ? true : undefined));

      phase = 'cutting';
      const cutUntil = Date.now() + CUT_FOR_MS;
      while (Date.now() < cutUntil) {
        const cut = await admin.query('select pg_terminate_backend(pid) as gone from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [db.name]);
        terminated += cut.rows.filter((row) => row.gone).length;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      phase = 'after';
      const recoveredAt = Date.now();
      // Recovered: a steady run of writes, every one acknowledged and read back.
      await until('the service to recover', 20_000, () => {
        const since = replies.filter((r) => r.phase === 'after');
        const tail = since.slice(-30);
        return tail.length === 30 && tail.every((r) => r.reply.status < 300) ? true : undefined;
      });
      const recoveryMs = Date.now() - recoveredAt;
      phase = 'done';
      await Promise.all(writers);

      const byStatus = (p: Phase) =>
        replies.filter((r) => r.phase === p).reduce<Record<string, number>>((counts, r) => {
          const label = `${r.what} ${r.reply.status}`;
          counts[label] = (counts[label] ?? 0) + 1;
          return counts;
        }, {});
      console.log(`postgres cut figures ${JSON.stringify({ terminated, recovery_ms: recoveryMs, before: byStatus('before'), cutting: byStatus('cutting'), after: byStatus('after') })}`);

      expect(terminated).toBeGreaterThan(0);
      const wrong = replies.filter(
        ({ reply }) =>
          reply.status >= 300 &&
          !(reply.status === 503 && reply.body?.ok === false && reply.body.error?.code === 'unavailable' && /^[0-9]+$/.test(reply.headers.get('retry-after') ?? '')),
      );
      expect(wrong.map(({ what, phase: p, reply }) => ({ what, phase: p, status: reply.status, body: reply.body }))).toEqual([]);
      // The cut was felt: some requests met it.
      expect(replies.some((r) => r.reply.status === 503)).toBe(true);

      const ready = await until('/readyz to be ready with the read models caught up', 15_000, async () => {
        const reply = await call(base, 'GET', '/readyz');
        return reply.status === 200 && reply.body.lag === 0 ? reply.body : undefined;
      });
      expect(ready.status).toBe('ready');

      const ledger = new Map((await ledgerEntries(base)).map((e) => [e.seq, e]));
      expect(acknowledged.filter((w) => ledger.get(w.seq)?.type !== 'PostCreated' || ledger.get(w.seq)?.data.post_id !== w.id)).toEqual([]);
      const reads = await Promise.all(acknowledged.map((w) => call(base, 'GET', `/api/v1/posts/${w.id}`)));
      expect(reads.filter((r) => r.status !== 200).map((r) => r.body)).toEqual([]);
      const attest = await call(base, 'GET', '/api/v1/attest');
      expect(attest.body.verified.ok).toBe(true);
    } finally {
      phase = 'done';
      await Promise.allSettled(writers);
      await admin.end();
    }
  }, 120_000);
});
