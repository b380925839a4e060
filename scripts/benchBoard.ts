/**
 * `npm run bench:board`: each board page against the JSON route it is rendered from, under 64 concurrent clients,
 * in the same run: requests/s and first-byte p99 (status line and headers), rounds alternated, medians compared.
 * Goal (issue 27): a page at least 0.7x its route's requests/s, with a first-byte p99 at most 1.5x.
 *
 * The world is a small society made through the API: BENCH_POSTERS (8) citizens with 5 posts each, one coin
 * deployed and bought, one bounty. The ledger page reads /attest and the tail of /changes; it is set against
 * that tail. Pages that read several routes (the citizen page adds its record) carry that in their figure.
 * The service (startEmbedded) runs in this process on a fresh PostgreSQL database and Redis prefix, removed at
 * the end. BENCH_SECONDS (3) measured per target and round after BENCH_WARMUP_SECONDS (1), BENCH_ROUNDS (3).
 * BENCH_PAGES (a comma list of pair names) runs only those. Also reports the page weights (HTML of each page, the JS and CSS it loads). Writes .bench/board-<timestamp>.json.
 */
import path from 'node:path';
import { airdrop, registerCitizen, type TestCitizen } from '../test/support/citizens';
import { call } from '../test/support/http';
import { runBench, type Cleanup } from './bench/cleanup';
import { startBenchService } from './bench/embeddedService';
import { runLoad } from './bench/load';
import { machineNow, mediansOf, ratioOf, roundLine, roundOf, roundsReport, writeFigures, type TargetRound } from './bench/pairs';
import { fixed, table } from './bench/report';
import { setting } from './bench/settings';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = setting('BENCH_SECONDS', 3, 1);
const WARMUP_SECONDS = setting('BENCH_WARMUP_SECONDS', 1, 0);
const ROUNDS = Math.floor(setting('BENCH_ROUNDS', 3, 1));
const POSTERS = Math.floor(setting('BENCH_POSTERS', 8, 1));
/** BENCH_PAGES=front,token runs only those pairs. */
const ONLY = process.env.BENCH_PAGES?.split(',').filter(Boolean);
const CLIENTS = 64;
const MAX_REQUESTS_PER_ROUND = 200_000;
const REQUEST_TIMEOUT_MS = 30_000;
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const ASSETS = { js: ['/assets/board.js', '/assets/chart.js', '/assets/vendor/lightweight-charts.mjs'], css: ['/assets/board.css'] };

interface Pair {
  name: string;
  page: string;
  json: string;
}

async function society(url: string, fund: (wallet: string) => Promise<unknown>): Promise<Pair[]> {
  const posters: TestCitizen[] = [];
  for (let i = 0; i < POSTERS; i++) posters.push(await registerCitizen(url, 'bb', { bio: `bench citizen ${i}` }));
  const dev = posters[0]!;
  await fund(dev.wallet);
  const post = (who: TestCitizen, route: string, body: Record<string, unknown>) => call(url, 'POST', route, { key: who.key, body });
  const deployed = await post(dev, '/api/v1/tokens/deploy', { name: 'Bench Coin', symbol: 'BNCH', description: 'a coin to read', image: PNG, dev_buy_sol: 0.1 });
  if (deployed.status !== 201) throw new Error(`deploy: HTTP ${deployed.status} ${JSON.stringify(deployed.body)}`);
  const mint = deployed.body.mint as string;
  await post(dev, '/api/v1/tokens/buy', { mint, amount_sol: 0.2 });
  const firsts: string[] = [];
  for (const [i, who] of posters.entries()) {
    for (let n = 0; n < 5; n++) {
      const made = await post(who, '/api/v1/posts', { body: `post ${n} of citizen ${i}: something about the market`, ...(n === 0 ? { mint } : {}) });
      if (n === 0) firsts.push(made.body.post.id as string);
    }
  }
  const thread = firsts[0]!;
  for (const [i, who] of posters.entries()) await post(who, '/api/v1/posts', { body: `reply ${i}: agreed`, parent_id: thread });
  const bounty = await post(dev, '/api/v1/bounties', { title: 'Find the bug', body: 'Conditions: a failing test.', reward_sol: 0.01 });
  const bountyId = bounty.body.bounty.id as string;
  const { length } = (await call(url, 'GET', '/api/v1/attest')).body as { length: number };
  return [
    { name: 'front', page: '/', json: '/api/v1/front' },
    { name: 'thread', page: `/p/${thread}`, json: `/api/v1/posts/${thread}` },
    { name: 'leaderboard', page: '/leaderboard', json: '/api/v1/leaderboard' },
    { name: 'tokens', page: '/t', json: '/api/v1/tokens' },
    { name: 'token', page: `/t/${mint}`, json: `/api/v1/tokens/${mint}` },
    { name: 'citizen', page: `/a/${dev.handle}`, json: `/api/v1/agents/${dev.handle}` },
    { name: 'bounties', page: '/b', json: '/api/v1/bounties?status=all' },
    { name: 'bounty', page: `/b/${bountyId}`, json: `/api/v1/bounties/${bountyId}` },
    { name: 'ledger', page: '/ledger', json: `/api/v1/changes?after=${Math.max(-1, length - 51)}&limit=50` },
  ];
}

async function weights(url: string, pairs: Pair[]): Promise<Record<string, number>> {
  const kb = async (p: string) => (await (await fetch(url + p)).arrayBuffer()).byteLength / 1024;
  const out: Record<string, number> = {};
  for (const pair of pairs) out[`html ${pair.name}`] = await kb(pair.page);
  for (const p of [...ASSETS.js, ...ASSETS.css]) out[p] = await kb(p);
  return out;
}

async function main(cleanup: Cleanup): Promise<void> {
  const startedAt = new Date();
  const machine = machineNow();
  const server = await startBenchService(cleanup, 'board');
  const pairs = (await society(server.url, (wallet) => airdrop(server.services.chain.connection, wallet, 3))).filter((p) => !ONLY || ONLY.includes(p.name));
  const targets = pairs.flatMap((p) => [`${p.name} page`, `${p.name} json`]);
  process.stderr.write(`ready; ${pairs.length} pages\n`);

  const rounds: TargetRound<string>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const pair of pairs) {
      // Which of the two goes first alternates by round, so neither always runs on the other's warmed caches.
      for (const kind of round % 2 ? (['page', 'json'] as const) : (['json', 'page'] as const)) {
        const target = `${pair.name} ${kind}`;
        process.stderr.write(`round ${round}/${ROUNDS}: ${target} (${WARMUP_SECONDS} s warm-up + ${SECONDS} s) ... `);
        const result = await runLoad({
          url: server.url,
          path: pair[kind],
          clients: CLIENTS,
          warmupMs: WARMUP_SECONDS * 1000,
          durationMs: SECONDS * 1000,
          maxRequests: MAX_REQUESTS_PER_ROUND,
          timeoutMs: REQUEST_TIMEOUT_MS,
          headers: () => ({ accept: kind === 'page' ? 'text/html' : 'application/json' }),
          get: { path: () => pair[kind] },
          body: () => '',
          check: (_status, body) => (kind === 'page' ? (body.startsWith('<!doctype html>') ? undefined : 'not html') : body.startsWith('{"ok":true') ? undefined : 'not ok'),
        });
        // The latencies compared are to the first byte.
        const figures = roundOf(target, round, { ...result, latenciesMs: result.firstByteMs });
        rounds.push(figures);
        process.stderr.write(roundLine(figures));
      }
    }
  }

  const summary = mediansOf(rounds, targets);
  const ratios = Object.fromEntries(pairs.map((p) => [p.name, ratioOf(summary[`${p.name} page`]!, summary[`${p.name} json`]!)]));
  const sizes = await weights(server.url, pairs);
  const title =
    `Board pages vs their JSON routes, ${CLIENTS} concurrent clients, first-byte latency; ${WARMUP_SECONDS} s warm-up + ${SECONDS} s per target, ` +
    `${ROUNDS} round(s); ${machine.cpus} CPUs, load average ${machine.loadAverage.join(' ')}, node ${process.version}`;
  const ratioRows = pairs.map((p) => [p.name, fixed(ratios[p.name]!.tps, 2), fixed(ratios[p.name]!.p99, 2), ratios[p.name]!.tps >= 0.7 && ratios[p.name]!.p99 <= 1.5 ? 'yes' : 'no']);
  console.log(
    `\n${[
      title,
      '',
      ...roundsReport(rounds, targets, summary),
      '',
      table(['page / json', 'req/s ratio', 'first-byte p99 ratio', 'goal met (>= 0.7, <= 1.5)'], ratioRows),
      '',
      table(['weight', 'KB'], Object.entries(sizes).map(([name, size]) => [name, fixed(size, 1)])),
    ].join('\n')}`,
  );
  const file = writeFigures(ROOT, 'board', startedAt, { settings: { clients: CLIENTS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, rounds: ROUNDS }, machine, rounds, summary, ratios, weightsKb: sizes });
  console.log(`\nfigures written to ${path.relative(process.cwd(), file) || file}`);
}

const limitMs = 120_000 + ROUNDS * 16 * ((WARMUP_SECONDS + SECONDS) * 1000 + REQUEST_TIMEOUT_MS) + 60_000;
runBench('bench:board', limitMs, main);
