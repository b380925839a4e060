/**
 * GET /api/v1/search and GET /api/v1/front under 64 concurrent clients, each against a plain express route
 * doing one indexed SELECT of 30 posts (scripts/bench/serveIndexedSelect.ts) on the same database in the
 * same run. Search cycles through a mix of terms: one that matches nothing, a rare word, a very common
 * word and short phrases across words. Rounds alternate the targets; medians are compared.
 *
 * `measureSearchAndFront` works on any database whose read models hold the posts (scripts/benchScale.ts
 * loads its own world and calls it). Run alone (`node --import tsx scripts/bench/searchRate.ts`) it loads
 * BENCH_POSTS (100,000) posts through the real ledger and projector into a fresh database first, and drops
 * the database at the end unless BENCH_KEEP_DB=1 (then it prints the URL, for EXPLAIN ANALYZE by hand);
 * BENCH_DATABASE_URL with BENCH_DATA_DIR measures a kept one again. It prints EXPLAIN ANALYZE of each term
 * first, and last the database side alone (`measureDatabasePath`): the service keeps each reply for as long
 * as the read models stand still, so over HTTP a repeated question is answered from memory.
 */
import path from 'node:path';
import { sql } from 'kysely';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LedgerWriter, PostgresEventStore } from '@svc/ledger';
import { agents, bounties, posts, readCheckpoint, search, tokens } from '@svc/projections';
import { openDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir } from '../../test/support/env';
import { startChild, type Child } from './children';
import { runLoad } from './load';
import { mediansOf, ratioOf, roundLine, roundOf, roundsReport, writeFigures, machineNow, type TargetMedians, type TargetRound } from './pairs';
import { startServiceChild } from './serviceChild';
import { setting } from './settings';
import { distribution } from './stats';
import { executeAll, skewedVotes, threadPosts } from './seed';

const ROOT = path.resolve(__dirname, '../..');

/** The words posts are made of in `seedPosts`; each post draws 8-19 of them, so every one is in a fifth of the posts or so. */
export const WORDS = (
  'sol moon pump curve whale alpha beta gamma signal chart candle volume liquidity rug degen ape hodl ' +
  'bull bear long short breakout support resistance fib macro micro rotation narrative meta airdrop ' +
  'staking yield vault bridge oracle mempool validator slot epoch fee priority jito bundle mev sniper ' +
  'launch graduate migrate pool swap route quote slippage depth spread maker taker funding basis'
).split(' ');
const TAGS = ['macro', 'memes', 'alpha', 'defi', 'nft', 'infra', 'trading', 'research', 'news', 'onchain'];
/** A word in one post in ten thousand (every 10,000th). */
export const RARE_WORD = 'zebracorn';

/** The mix search cycles through, by kind, for a world made by `seedPosts`. */
export const DEFAULT_TERMS: Record<string, string[]> = {
  none: ['qxjzvw', 'nothing matches this'],
  rare: [RARE_WORD],
  common: ['moon', 'liquidity'],
  phrase: ['liquidity rug', 'breakout sup', 'whale alpha'],
};

/**
 * Registers `posts / 50` citizens, then `posts` posts (a fifth of them replies) and half as many votes,
 * through the real ledger writer; returns the ledger head. The read models follow once a projector runs.
 */
export async function seedPosts(url: string, posts: number): Promise<number> {
  const citizens = Math.ceil(posts / 50);
  const database = await openDatabase({ url, dataDir: tempDir('bench-search-seed') });
  const store = await new PostgresEventStore(database).init();
  const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { maxBatch: 2000 });
  try {
    await writer.start();
    let state = 42;
    // Integer arithmetic: the same recurrence in doubles loses its low bits and repeats patterns.
    const rnd = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
    const run = (commands: LedgerCommand[]) => executeAll(writer, commands);
    const agents = Array.from({ length: citizens }, (_, i) => `agent_search${i}`);
    await run(
      agents.map((agent_id, i) => ({
        type: 'RegisterCitizen' as const,
        data: { agent_id, handle: `searcher${i}`, model: 'bench', bio: `${pick(WORDS)} trader`, wallet: `W${i}`, custody: 'service' as const },
      })),
    );
    let written = 0;
    const body = () => {
      const words = Array.from({ length: 8 + Math.floor(rnd() * 12) }, () => pick(WORDS));
      if (++written % 10_000 === 0) words.splice(Math.floor(rnd() * words.length), 0, RARE_WORD);
      return words.join(' ');
    };
    const { top, posts: topLevel, replies } = threadPosts(agents, posts, { idPrefix: 'search', body, tags: TAGS, rnd });
    await run(topLevel);
    await run(replies);
    await run(skewedVotes(agents, top, posts / 2, rnd));
    return writer.head.seq;
  } finally {
    await store.close();
    await database.close();
  }
}

/**
 * The real service (ledger, projector and API in one process) on `databaseUrl`, in a child process. `dataDir`
 * holds the master key that sealed the treasury's wallet: a database is served again only with the same one.
 */
export function startService(databaseUrl: string, dataDir = tempDir('bench-search')): Promise<Child> {
  return startServiceChild(databaseUrl, dataDir, { startupTimeoutMs: 300_000 });
}

/** Waits (polling, this is a benchmark) until the read models of `databaseUrl` reach `head`. */
export async function awaitProjected(databaseUrl: string, head: number): Promise<void> {
  const watch = await openDatabase({ url: databaseUrl, dataDir: tempDir('bench-search-watch') });
  try {
    while ((await readCheckpoint(watch.db, 'rm')) < head) await new Promise((resolve) => setTimeout(resolve, 250));
    await sql`analyze`.execute(watch.db);
  } finally {
    await watch.close();
  }
}

/** What EXPLAIN ANALYZE says of one search of posts: its time and the plan lines that show how it found them. */
export interface SearchPlan {
  term: string;
  kind: string;
  /** `search`: the query the service runs; `one query`: the single ILIKE ordered newest first that it replaced. */
  query: 'search' | 'one query';
  ms: number;
  rows: number;
  plan: string[];
}

/**
 * EXPLAIN ANALYZE of the posts lookup search runs, for each term (median time of `runs`), and of the front
 * page's first slice.
 */
export async function explainSearch(databaseUrl: string, terms: Record<string, string[]> = DEFAULT_TERMS, runs = 3): Promise<SearchPlan[]> {
  const database = await openDatabase({ url: databaseUrl, dataDir: tempDir('bench-search-explain') });
  const plans: SearchPlan[] = [];
  const explain = async (term: string, kind: string, query: { compile(): { sql: string; parameters: readonly unknown[] } }, label: SearchPlan['query'] = 'search') => {
    const { sql: text, parameters } = query.compile();
    const times: number[] = [];
    let lines: string[] = [];
    for (let i = 0; i < runs; i++) {
      const { rows } = await database.db.executeQuery<Record<string, string>>({ sql: `explain (analyze, costs off) ${text}`, parameters, query: { kind: 'RawNode' } } as any);
      lines = rows.map((r) => r['QUERY PLAN']!);
      times.push(Number(/Execution Time: ([\d.]+)/.exec(lines.join('\n'))?.[1]));
    }
    times.sort((a, b) => a - b);
    const top = /actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/.exec(lines[0] ?? '');
    const telling = lines.filter((l) => /Scan|Removed|Heap Blocks|Sort Method|never executed/.test(l)).map((l) => l.trim());
    plans.push({ term, kind, query: label, ms: times[Math.floor(times.length / 2)]!, rows: Number(top?.[1] ?? 0), plan: telling });
  };
  try {
    for (const [kind, list] of Object.entries(terms)) {
      for (const term of list) {
        await explain(term, kind, search.matching(database.db, 'rm', 'post', term, 20));
        const oneQuery = database.db
          .selectFrom('rm.search_docs')
          .select('ref_id')
          .where(sql<boolean>`kind = 'post'`)
          .where(sql<boolean>`text ilike ${search.containsPattern(term)}`)
          .orderBy('seq', 'desc')
          .limit(20);
        await explain(term, kind, oneQuery, 'one query');
      }
    }
    await explain('(front slice)', 'front', posts.frontSlice(database.db, 'rm', 30));
  } finally {
    await database.close();
  }
  return plans;
}

export type ReadTarget = 'select' | 'search' | 'front';
const TARGETS: readonly ReadTarget[] = ['select', 'search', 'front'];

export interface SearchAndFrontOptions {
  databaseUrl: string;
  /** A running service on that database; started (and stopped) here when absent. */
  serviceUrl?: string;
  /** The data directory (master key) of the service that first ran on the database, to start one here. */
  dataDir?: string;
  /** Search terms by kind (none, rare, common, phrase); DEFAULT_TERMS suits a world made by `seedPosts`. */
  terms?: Record<string, string[]>;
  clients?: number;
  rounds?: number;
  seconds?: number;
  warmupSeconds?: number;
  log?: (line: string) => void;
}

export interface SearchAndFrontFigures {
  clients: number;
  terms: Record<string, string[]>;
  rounds: TargetRound<ReadTarget>[];
  medians: Record<ReadTarget, TargetMedians>;
  /** search and front over the indexed SELECT: tps above 1 is faster, p99 below 1 is faster. */
  ratios: { search: { tps: number; p50: number; p99: number }; front: { tps: number; p50: number; p99: number } };
  /** Each search term's reply, checked once before the load: how many rows of each kind it found. */
  found: Record<string, Record<string, number>>;
  report: string[];
}

/**
 * Search (cycling through `terms`) and front against the indexed SELECT, `clients` concurrent clients,
 * rounds alternated. The baseline runs in a child process of its own, like the service.
 */
export async function measureSearchAndFront(options: SearchAndFrontOptions): Promise<SearchAndFrontFigures> {
  const clients = options.clients ?? 64;
  const rounds = options.rounds ?? setting('BENCH_ROUNDS', 2, 1);
  const seconds = options.seconds ?? setting('BENCH_SECONDS', 10, 1);
  const warmup = options.warmupSeconds ?? setting('BENCH_WARMUP_SECONDS', 2, 0);
  const terms = options.terms ?? DEFAULT_TERMS;
  const log = options.log ?? ((line: string) => console.log(line));
  const children: Child[] = [];
  try {
    let serviceUrl = options.serviceUrl;
    if (!serviceUrl) {
      const service = await startService(options.databaseUrl, options.dataDir);
      children.push(service);
      serviceUrl = service.url;
    }
    const baseline = await startChild({ name: 'select', entry: path.join(__dirname, 'serveIndexedSelect.ts'), cwd: ROOT, env: { ...process.env, DATABASE_URL: options.databaseUrl } });
    children.push(baseline);

    const mix = Object.values(terms).flat();
    const found: Record<string, Record<string, number>> = {};
    for (const q of mix) {
      const res = await fetch(`${serviceUrl}/api/v1/search?q=${encodeURIComponent(q)}`);
      const body = (await res.json()) as Record<string, unknown>;
      if (res.status !== 200) throw new Error(`search ${JSON.stringify(q)} answered ${res.status}: ${JSON.stringify(body)}`);
      found[q] = Object.fromEntries(['posts', 'tags', 'citizens', 'tokens', 'bounties'].map((kind) => [kind, (body[kind] as unknown[]).length]));
      log(`search ${JSON.stringify(q)}: ${JSON.stringify(found[q])}`);
    }

    let next = 0;
    const paths: Record<ReadTarget, { url: string; path(): string }> = {
      select: { url: baseline.url, path: () => '/select' },
      search: { url: serviceUrl, path: () => `/api/v1/search?q=${encodeURIComponent(mix[next++ % mix.length]!)}` },
      front: { url: serviceUrl, path: () => '/api/v1/front' },
    };
    const measured: TargetRound<ReadTarget>[] = [];
    for (let round = 1; round <= rounds; round++) {
      for (const target of TARGETS) {
        const result = await runLoad({
          url: paths[target].url,
          path: '/',
          clients,
          warmupMs: warmup * 1000,
          durationMs: seconds * 1000,
          maxRequests: 5_000_000,
          timeoutMs: 10_000,
          body: () => '',
          get: { path: paths[target].path },
        });
        const figures = roundOf(target, round, result);
        measured.push(figures);
        log(`round ${round} ${target.padEnd(6)} ${roundLine(figures).trimEnd()}`);
      }
    }
    const medians = mediansOf(measured, TARGETS);
    const ratios = { search: ratioOf(medians.search, medians.select), front: ratioOf(medians.front, medians.select) };
    const report = [
      ...roundsReport(measured, TARGETS, medians),
      '',
      `search / select: ${ratios.search.tps.toFixed(2)}x req/s, p99 ${ratios.search.p99.toFixed(2)}x (goal >= 0.7x, <= 2x)`,
      `front  / select: ${ratios.front.tps.toFixed(2)}x req/s, p99 ${ratios.front.p99.toFixed(2)}x (goal >= 0.7x, <= 2x)`,
    ];
    return { clients, terms, rounds: measured, medians, ratios, found, report };
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
  }
}

export interface DatabasePathFigures {
  /** Lookups per second and latency (ms) of each target, 64 loops over one pool of 10 connections in this process. */
  select: { perSecond: number; p50: number; p99: number };
  search: { perSecond: number; p50: number; p99: number };
  front: { perSecond: number; p50: number; p99: number };
  ratios: { search: { tps: number; p99: number }; front: { tps: number; p99: number } };
}

/**
 * The database side alone, with no HTTP and no kept replies: every search runs the five lookups the route
 * runs, every front page its slices, against the indexed SELECT of the baseline, each for `seconds`.
 */
export async function measureDatabasePath(options: { databaseUrl: string; terms?: Record<string, string[]>; clients?: number; seconds?: number }): Promise<DatabasePathFigures> {
  const clients = options.clients ?? 64;
  const seconds = options.seconds ?? setting('BENCH_SECONDS', 10, 1);
  const mix = Object.values(options.terms ?? DEFAULT_TERMS).flat();
  const database = await openDatabase({ url: options.databaseUrl, dataDir: tempDir('bench-search-path'), poolSize: 10 });
  const { db } = database;
  let next = 0;
  const targets = {
    select: () => sql`select * from rm.posts where parent_id is null order by seq desc limit 30`.execute(db),
    search: () => {
      const q = mix[next++ % mix.length]!;
      return Promise.all([
        posts.postsByIds(db, 'rm', search.matching(db, 'rm', 'post', q, 20)),
        search.searchTags(db, 'rm', q, 20),
        agents.agentsByIds(db, 'rm', search.matching(db, 'rm', 'citizen', q, 20)),
        bounties.bountiesByIds(db, 'rm', search.matching(db, 'rm', 'bounty', q, 20)),
        tokens.tokensByMints(db, 'rm', search.matching(db, 'rm', 'token', q, 20)),
      ]);
    },
    front: () => posts.frontPage(db, 'rm', 30),
  };
  try {
    const run = async (lookup: () => Promise<unknown>) => {
      const latencies: number[] = [];
      const deadline = performance.now() + seconds * 1000;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (performance.now() < deadline) {
            const t = performance.now();
            await lookup();
            latencies.push(performance.now() - t);
          }
        }),
      );
      const d = distribution(latencies);
      return { perSecond: latencies.length / ((performance.now() - started) / 1000), p50: d.p50, p99: d.p99 };
    };
    const select = await run(targets.select);
    const searched = await run(targets.search);
    const front = await run(targets.front);
    return {
      select,
      search: searched,
      front,
      ratios: {
        search: { tps: searched.perSecond / select.perSecond, p99: searched.p99 / select.p99 },
        front: { tps: front.perSecond / select.perSecond, p99: front.p99 / select.p99 },
      },
    };
  } finally {
    await database.close();
  }
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const posts = Math.floor(setting('BENCH_POSTS', 100_000, 1));
  const keep = process.env.BENCH_KEEP_DB === '1';
  const db = process.env.BENCH_DATABASE_URL ? undefined : await freshDatabase('bench_search');
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? db!.url;
  const dataDir = process.env.BENCH_DATA_DIR ?? tempDir('bench-search');
  let service: Child | undefined;
  try {
    if (db) {
      const seeded = Date.now();
      const head = await seedPosts(databaseUrl, posts);
      console.log(`seeded ${posts} posts: ledger head ${head} in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);
      const projected = Date.now();
      service = await startService(databaseUrl, dataDir);
      await awaitProjected(databaseUrl, head);
      console.log(`projected in ${((Date.now() - projected) / 1000).toFixed(1)} s`);
    }
    if (process.env.BENCH_SEED_ONLY === '1') return;
    const plans = await explainSearch(databaseUrl);
    for (const p of plans) console.log(`EXPLAIN ANALYZE ${p.query.padEnd(9)} ${p.kind.padEnd(6)} ${JSON.stringify(p.term).padEnd(24)} ${p.ms.toFixed(2).padStart(8)} ms, ${p.rows} rows; ${p.plan.filter((l) => /Removed|rows=\d{4}/.test(l)).join('; ')}`);
    const figures = await measureSearchAndFront({ databaseUrl, serviceUrl: service?.url, dataDir });
    for (const line of figures.report) console.log(line);
    const databasePath = await measureDatabasePath({ databaseUrl });
    for (const target of ['select', 'search', 'front'] as const) {
      const f = databasePath[target];
      console.log(`database path ${target.padEnd(6)} ${f.perSecond.toFixed(0)}/s, p50 ${f.p50.toFixed(1)} ms, p99 ${f.p99.toFixed(1)} ms`);
    }
    const { search: s, front: f } = databasePath.ratios;
    console.log(`database path, no kept replies: search ${s.tps.toFixed(2)}x, p99 ${s.p99.toFixed(2)}x; front ${f.tps.toFixed(2)}x, p99 ${f.p99.toFixed(2)}x`);
    const { report: _report, ...kept } = figures;
    console.log(`figures: ${writeFigures(ROOT, 'search-rate', startedAt, { posts, machine: machineNow(), plans, ...kept, databasePath })}`);
  } finally {
    await service?.stop();
    if (db && !keep) await db.drop().catch(() => undefined);
    if (db && keep) console.log(`kept database: ${databaseUrl} (data directory ${dataDir})`);
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
