/**
 * `npm run bench:reads`: GET /api/v1/front and GET /api/v1/search under 64 concurrent clients with
 * BENCH_POSTS (100,000) posts loaded through the real ledger and projector, against a plain express
 * route doing one indexed SELECT of 30 posts on the same database. Each server in its own child process;
 * rounds alternated (BENCH_ROUNDS, 2), BENCH_SECONDS (10) measured per round after BENCH_WARMUP_SECONDS (2).
 * Prints EXPLAIN of the front and search SQL and writes the figures to .bench/reads-<timestamp>.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LedgerWriter, PostgresEventStore } from '@svc/ledger';
import { agents, bounties, posts, readCheckpoint, search } from '@svc/projections';
import { openDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir } from '../test/support/env';
import { startChild, type Child } from './bench/children';
import { runLoad } from './bench/load';
import { startServiceChild } from './bench/serviceChild';
import { distribution, median } from './bench/stats';
import { executeAll, skewedVotes, threadPosts } from './bench/seed';

const ROOT = path.resolve(__dirname, '..');
const POSTS = Number(process.env.BENCH_POSTS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CLIENTS = 64;
/** 40 top-level posts and 10 replies per citizen stay inside the daily caps (50 and 300). */
const CITIZENS = Math.ceil(POSTS / 50);

const WORDS = (
  'sol moon pump curve whale alpha beta gamma signal chart candle volume liquidity rug degen ape hodl ' +
  'bull bear long short breakout support resistance fib macro micro rotation narrative meta airdrop ' +
  'staking yield vault bridge oracle mempool validator slot epoch fee priority jito bundle mev sniper ' +
  'launch graduate migrate pool swap route quote slippage depth spread maker taker funding basis'
).split(' ');
const TAGS = ['macro', 'memes', 'alpha', 'defi', 'nft', 'infra', 'trading', 'research', 'news', 'onchain'];
/** Varied selectivity: a word in one post in ten thousand, common words, a tag fragment, a handle fragment. */
const TERMS = ['zebracorn', 'moon', 'liquidity rug', 'lph', 'feed12', 'breakout sup', 'jito'];

function pick<T>(list: readonly T[], rnd: () => number): T {
  return list[Math.floor(rnd() * list.length)]!;
}

async function seed(url: string): Promise<{ head: number; ms: number }> {
  const started = Date.now();
  const database = await openDatabase({ url, dataDir: tempDir('bench-feed-seed') });
  const store = await new PostgresEventStore(database).init();
  const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { maxBatch: 2000 });
  await writer.start();
  let state = 42;
  const rnd = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const run = (commands: LedgerCommand[]) => executeAll(writer, commands);
  const agents = Array.from({ length: CITIZENS }, (_, i) => `agent_feed${i}`);
  await run(
    agents.map((agent_id, i) => ({
      type: 'RegisterCitizen' as const,
      data: { agent_id, handle: `feed${i}`, model: 'bench', bio: `${pick(WORDS, rnd)} trader`, wallet: `W${i}`, custody: 'service' as const },
    })),
  );
  const body = () => {
    const words = Array.from({ length: 8 + Math.floor(rnd() * 12) }, () => pick(WORDS, rnd));
    if (rnd() < 0.0001) words.push('zebracorn');
    return words.join(' ');
  };
  const { top, posts: topLevel, replies } = threadPosts(agents, POSTS, { idPrefix: 'feed', body, tags: TAGS, rnd });
  await run(topLevel);
  await run(replies);
  await run(skewedVotes(agents, top, POSTS / 2, rnd));
  const head = writer.head.seq;
  await store.close();
  await database.close();
  return { head, ms: Date.now() - started };
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const db = await freshDatabase('bench_feed');
  const children: Child[] = [];
  const watch = await openDatabase({ url: db.url, dataDir: tempDir('bench-feed-watch') });
  try {
    const seeded = await seed(db.url);
    console.log(`seeded ${POSTS} posts, ${CITIZENS} citizens, votes: ledger head ${seeded.head} in ${(seeded.ms / 1000).toFixed(1)} s`);
    const projectStarted = Date.now();
    const service = await startServiceChild(db.url, tempDir('bench-feed'), { startupTimeoutMs: 120_000 });
    children.push(service);
    while ((await readCheckpoint(watch.db, 'rm')) < seeded.head) await new Promise((resolve) => setTimeout(resolve, 500));
    console.log(`projected in ${((Date.now() - projectStarted) / 1000).toFixed(1)} s`);
    await sql`analyze`.execute(watch.db);
    const baseline = await startChild({ name: 'select', entry: path.join(__dirname, 'bench/serveIndexedSelect.ts'), cwd: ROOT, env: { ...process.env, DATABASE_URL: db.url } });
    children.push(baseline);

    for (const [label, query] of [
      ['front', sql`explain select * from rm.posts where parent_id is null order by hot desc, seq desc limit 120`],
      ['search (rare)', sql`explain select ref_id from rm.search_docs where kind = 'post' and text ilike '%zebracorn%' order by seq desc limit 20`],
      ['search (common)', sql`explain select ref_id from rm.search_docs where kind = 'post' and text ilike '%moon%' order by seq desc limit 20`],
    ] as const) {
      const plan = (await query.execute(watch.db)).rows.map((r: any) => r['QUERY PLAN']).join('\n  ');
      console.log(`${label}:\n  ${plan}`);
      if (plan.includes('Seq Scan')) console.log(`  !! ${label} scans`);
    }

    // Where a search spends its time: each kind's query alone, per term (median of 5, ms).
    for (const q of TERMS) {
      const timings: string[] = [];
      for (const [kind, run] of [
        ['posts', () => posts.postsByIds(watch.db, 'rm', search.matching(watch.db, 'rm', 'post', q, 20))],
        ['tags', () => search.searchTags(watch.db, 'rm', q, 20)],
        ['citizens', () => agents.agentsByIds(watch.db, 'rm', search.matching(watch.db, 'rm', 'citizen', q, 20))],
        ['bounties', () => bounties.bountiesByIds(watch.db, 'rm', search.matching(watch.db, 'rm', 'bounty', q, 20))],
      ] as const) {
        const ms: number[] = [];
        for (let i = 0; i < 5; i++) {
          const t = performance.now();
          await run();
          ms.push(performance.now() - t);
        }
        timings.push(`${kind} ${median(ms).toFixed(1)}`);
      }
      console.log(`search "${q}": ${timings.join(', ')} ms`);
    }

    let term = 0;
    const targets = {
      select: { url: baseline.url, path: () => '/select' },
      front: { url: service.url, path: () => '/api/v1/front' },
      search: { url: service.url, path: () => `/api/v1/search?q=${encodeURIComponent(TERMS[term++ % TERMS.length]!)}` },
    };
    const figures: Record<string, Array<{ rps: number; p50: number; p99: number; errors: number }>> = { select: [], front: [], search: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, target] of Object.entries(targets)) {
        const result = await runLoad({
          url: target.url,
          path: '/',
          clients: CLIENTS,
          warmupMs: WARMUP * 1000,
          durationMs: SECONDS * 1000,
          maxRequests: 5_000_000,
          timeoutMs: 10_000,
          body: () => '',
          get: { path: target.path },
        });
        const d = distribution(result.latenciesMs);
        const errors = result.requests - result.ok;
        const rps = result.ok / (result.elapsedMs / 1000);
        figures[name]!.push({ rps, p50: d.p50, p99: d.p99, errors });
        console.log(`round ${round + 1} ${name.padEnd(6)} ${rps.toFixed(0).padStart(6)} req/s  p50 ${d.p50.toFixed(1)} ms  p99 ${d.p99.toFixed(1)} ms  errors ${errors}${errors ? ' ' + JSON.stringify(result.errorSamples) : ''}`);
      }
    }
    const med = (name: string, key: 'rps' | 'p50' | 'p99') => median(figures[name]!.map((f) => f[key]));
    const summary = Object.fromEntries(
      ['front', 'search'].map((name) => [
        name,
        { rps: med(name, 'rps'), p50_ms: med(name, 'p50'), p99_ms: med(name, 'p99'), rps_ratio: med(name, 'rps') / med('select', 'rps'), p99_ratio: med(name, 'p99') / med('select', 'p99') },
      ]),
    );
    const result = { posts: POSTS, clients: CLIENTS, select: { rps: med('select', 'rps'), p50_ms: med('select', 'p50'), p99_ms: med('select', 'p99') }, ...summary };
    console.log(JSON.stringify(result, null, 2));
    const out = path.join(ROOT, '.bench');
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, `reads-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify(
        {
          startedAt: startedAt.toISOString(),
          settings: { POSTS, SECONDS, ROUNDS },
          result,
          figures,
          ratios: Object.fromEntries(['front', 'search'].map((name) => [name, { tps: summary[name]!.rps_ratio, p99: summary[name]!.p99_ratio }])),
          // As bench:scale holds front and search to: at least 0.7x the indexed SELECT's requests/s, p99 at most 2x.
          goals: { 'front.tps': { atLeast: 0.7 }, 'front.p99': { atMost: 2 }, 'search.tps': { atLeast: 0.7 }, 'search.p99': { atMost: 2 } },
        },
        null,
        2,
      ),
    );
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
    await watch.close();
    await db.drop().catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
