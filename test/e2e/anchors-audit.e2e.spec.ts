import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Config } from '@svc/config';
import { sealAndEncode, type LedgerEntry } from '@svc/ledger';
import { projections, rebuildReadModels, type AnchorView } from '@svc/projections';
import { openBus, openStorage } from '@svc/runtime';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { runAudit } from '../support/audit';
import { airdrop, registerCitizen } from '../support/citizens';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';
import { freePort } from '../support/ports';
import { until } from '../support/until';

// The acid test of the anchors (issue 28): whoever runs the database rewrites one post and recomputes every hash
// after it, so the stored chain is consistent again and the service serves it. /attest and the plain audit cannot
// tell; the audit against Solana names the first anchor after the rewrite, and raises no alarm before it. Dropping
// the anchors' own records from the ledger as well does not hide them: the treasury's history on Solana holds them.

jest.setTimeout(180_000);

const ANCHOR_EVERY_ENTRIES = 5;
const ANCHOR_ROUNDS = 3;
/** The anchor runner looks this often whether an anchor is due, so that posts are anchored as they land. */
const RUNNER_EVERY_MS = 100;

let db: FreshDatabase;
let config: Config;
let server: RunningServer;
let sql: pg.Client;

beforeAll(async () => {
  db = await freshDatabase('anchors_audit');
  config = testConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
    DATA_DIR: tempDir('anchors-audit'),
    SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
    ANCHOR_EVERY_ENTRIES: String(ANCHOR_EVERY_ENTRIES),
    // Only the entry count anchors here, so that what is anchored follows from the posts.
    ANCHOR_INTERVAL_MS: '0',
  });
  server = await start();
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
});

afterAll(async () => {
  await sql?.end().catch(() => undefined);
  await server?.close();
  await db?.drop();
});

const start = () => startEmbedded(config, { anchors: { everyMs: RUNNER_EVERY_MS } });

/** Every anchor the service lists, oldest first, through all pages. */
async function listedAnchors(): Promise<AnchorView[]> {
  const all: AnchorView[] = [];
  let before: number | null = null;
  do {
    const reply: { status: number; body: { anchors: AnchorView[]; next_before: number | null } } = await call(server.url, 'GET', `/api/v1/anchors?limit=2${before === null ? '' : `&before=${before}`}`);
    expect(reply.status).toBe(200);
    all.push(...reply.body.anchors);
    before = reply.body.next_before;
  } while (before !== null);
  return all.reverse();
}

/** Every stored ledger entry, as the event store keeps it. */
async function storedEntries(): Promise<LedgerEntry[]> {
  const rows = await sql.query(`select data from es.events where stream = 'ledger' order by revision`);
  return rows.rows.map((row) => JSON.parse(row.data as string) as LedgerEntry);
}

/**
 * What an operator with the database can do with the service stopped, triggers bypassed so that nothing marks the
 * rows: replace the entries from `from` on with what `change` makes of them, numbered on from `from` and each sealed
 * on the one before, and move the writer's stored head along. Gives the new hashes by seq.
 */
async function rewriteHistory(from: number, change: (tail: LedgerEntry[]) => LedgerEntry[]): Promise<Map<number, string>> {
  const entries = await storedEntries();
  const tail = change(entries.slice(from));
  const rehashed = new Map<number, string>();
  await sql.query('begin');
  await sql.query('set local session_replication_role = replica');
  let prev = entries[from]!.prev;
  for (const [i, entry] of tail.entries()) {
    const seq = from + i;
    const sealed = sealAndEncode(prev, { seq, type: entry.type, at: entry.at, actor: entry.actor, data: entry.data });
    const updated = await sql.query(`update es.events set type = $1, data = $2 where stream = 'ledger' and revision = $3`, [entry.type, sealed.bytes, seq]);
    expect(updated.rowCount).toBe(1);
    rehashed.set(seq, sealed.entry.hash);
    prev = sealed.entry.hash;
  }
  const head = from + tail.length - 1;
  await sql.query(`delete from es.events where stream = 'ledger' and revision > $1`, [head]);
  const moved = await sql.query(`update es.decision_state_head set seq = $1, hash = $2 where stream = 'ledger'`, [head, prev]);
  expect(moved.rowCount).toBe(1);
  await sql.query('commit');
  expect((await sql.query('select count(*)::int as n from es.tamper_marks')).rows[0].n).toBe(0);
  return rehashed;
}

/** Stops the service, rewrites its history (rewriteHistory), rebuilds the read models from it as `npm run replay` does, and starts it again. */
async function rewriteAndRestart(from: number, change: (tail: LedgerEntry[]) => LedgerEntry[]): Promise<Map<number, string>> {
  await server.close();
  const rehashed = await rewriteHistory(from, change);
  await replayReadModels();
  server = await start();
  return rehashed;
}

async function replayReadModels(): Promise<void> {
  // A rebuild never moves a read model back: one past a shortened ledger would wait for it forever. They go first.
  await sql.query(`drop schema ${config.readModelSchema} cascade`);
  const storage = await openStorage(config, 'svc-test-replay');
  const bus = openBus(config);
  try {
    await rebuildReadModels({ database: storage.database, store: storage.store, schema: config.readModelSchema, bus, batchSize: 500, projections });
  } finally {
    await bus.close();
    await storage.close();
  }
}

const audit = (...args: string[]) => runAudit('--url', server.url, '--rpc', server.solanaRpcUrl, ...args);

/** The anchor with the lowest seq at or after `seq`, of those listed. */
const firstFrom = (anchors: AnchorView[], seq: number) => anchors.filter((a) => a.seq >= seq).sort((a, b) => a.seq - b.seq)[0]!;

describe('the audit against the chain', () => {
  let anchors: AnchorView[];
  let target: LedgerEntry;

  it('verifies every anchor of an untouched ledger (no false alarm)', async () => {
    const treasury = (await call(server.url, 'GET', '/api/v1/treasury')).body.wallet as string;
    await airdrop(server.services.chain.connection, treasury, 2);
    const author = await registerCitizen(server.url, 'anchored');
    for (let round = 0; round < ANCHOR_ROUNDS; round += 1) {
      const before = (await listedAnchors()).length;
      for (let i = 0; i < ANCHOR_EVERY_ENTRIES; i += 1) {
        const posted = await call(server.url, 'POST', '/api/v1/posts', { key: author.key, body: { body: `round ${round}, post ${i}` } });
        expect(posted.status).toBe(201);
      }
      anchors = await until(`anchor ${before + 1}`, 30_000, async () => {
        const listed = await listedAnchors();
        return listed.length > before ? listed : undefined;
      }, 50);
    }
    expect(anchors.length).toBeGreaterThanOrEqual(ANCHOR_ROUNDS);

    const run = await audit('--json');

    expect(run.code).toBe(0);
    const verdict = JSON.parse(run.stdout);
    const length = (await call(server.url, 'GET', '/api/v1/attest')).body.length as number;
    expect(verdict).toMatchObject({ ok: true, head: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // Entries and anchors may have landed since the list was read, never fewer.
    expect(verdict.entries).toBeGreaterThan(anchors.at(-1)!.ledger_seq);
    expect(verdict.entries).toBeLessThanOrEqual(length);
    expect(verdict.anchors).toBeGreaterThanOrEqual(anchors.length);
    expect(verdict.latest_anchor_seq).toBeGreaterThanOrEqual(anchors.at(-1)!.seq);
    const text = await audit();
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^OK: \d+ entries verified, head [0-9a-f]{64}; \d+ anchors verified against the chain, latest at seq \d+\n$/);
  });

  it('names the first anchor after a post rewritten with every later hash recomputed, which /attest and the plain audit cannot see', async () => {
    const entries = await storedEntries();
    // A post after the first anchor, with a later one: the anchors before it must still hold.
    target = entries.find((e) => e.type === 'PostCreated' && e.seq > anchors[0]!.seq)!;
    expect(anchors.some((a) => a.seq >= target.seq)).toBe(true);
    const postId = (target.data as { post_id: string }).post_id;

    const rehashed = await rewriteAndRestart(target.seq, ([post, ...rest]) => [{ ...post!, data: { ...post!.data, body: 'this post never said that' } }, ...rest]);

    // The service serves the rewritten history as its own, and its own checks find nothing wrong.
    expect((await call(server.url, 'GET', `/api/v1/posts/${postId}`)).body.post.body).toBe('this post never said that');
    const requested = Date.now();
    expect((await call(server.url, 'GET', '/api/v1/attest?full=true')).status).toBe(200);
    const attested = await until('the full pass to finish', 60_000, async () => {
      const body = (await call(server.url, 'GET', '/api/v1/attest')).body;
      return body.full?.state === 'finished' && body.full.started_at >= requested ? body : undefined;
    }, 50);
    expect(attested.full).toMatchObject({ ok: true, checked: attested.length });
    expect(attested.verified.ok).toBe(true);
    expect(attested.head).toBe(rehashed.get(attested.length - 1));
    expect(await runAudit('--url', server.url)).toMatchObject({ code: 0, stdout: `OK: ${attested.length} entries verified, head ${attested.head}\n` });

    const first = firstFrom(await listedAnchors(), target.seq);
    // The same anchor as before the rewrite (its explorer link names the chain's new port).
    expect([first.seq, first.signature, first.hash]).toEqual([firstFrom(anchors, target.seq).seq, firstFrom(anchors, target.seq).signature, firstFrom(anchors, target.seq).hash]);
    const reason = `the memo commits to hash ${first.hash}, but the served chain recomputes ${rehashed.get(first.seq)} at seq ${first.seq}`;

    const run = await audit();
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`FAILED: anchor at seq ${first.seq} (${first.signature}) disagrees: ${reason}\n`);
    const json = await audit('--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, first_bad_anchor: { seq: first.seq, signature: first.signature, reason } });
  });

  it("still names it when the anchors' own records after the rewrite are dropped from the ledger too", async () => {
    const first = firstFrom(anchors, target.seq);
    const isLaterAnchor = (e: LedgerEntry) => e.type === 'ActionRecorded' && e.data.action === 'anchor' && (e.data.details as { seq: number }).seq >= target.seq;
    const before = await storedEntries();
    const dropped = before.filter(isLaterAnchor).map((e) => e.data.signature);
    expect(dropped).toContain(first.signature);

    await rewriteAndRestart(before.find(isLaterAnchor)!.seq, (tail) => tail.filter((e) => !isLaterAnchor(e)));

    // Neither the service nor the ledger knows those anchors any more (the runner may have anchored the new head
    // since, which holds); the chain it serves verifies.
    expect((await listedAnchors()).filter((a) => dropped.includes(a.signature))).toEqual([]);
    const entries = await storedEntries();
    expect(entries.filter((e) => e.type === 'ActionRecorded' && dropped.includes(e.data.signature))).toEqual([]);
    expect((await runAudit('--url', server.url)).code).toBe(0);
    const reason =
      first.seq < entries.length
        ? `the memo commits to hash ${first.hash}, but the served chain recomputes ${entries[first.seq]!.hash} at seq ${first.seq}`
        : `the chain is shorter than an anchor: the memo names seq ${first.seq}, the served chain ends at seq ${entries.length - 1}`;

    const run = await audit();

    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`FAILED: anchor at seq ${first.seq} (${first.signature}) disagrees: ${reason}\n`);
  });

  it('exits 2 when the RPC cannot be reached or is not a URL', async () => {
    const unreachable = await runAudit('--url', server.url, '--rpc', `http://127.0.0.1:${await freePort()}`);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(/RPC getSignaturesForAddress at .* failed after 3 retries/);
    const notUrl = await runAudit('--url', server.url, '--rpc', 'solana');
    expect(notUrl.code).toBe(2);
    expect(notUrl.stderr).toContain('--rpc is not a URL');
  });
});
