/**
 * `npm run bench:mcp`: what MCP costs over plain HTTP for the same endpoint, in the same run. Two pairs, each
 * with 16 concurrent clients on their own citizens: an authenticated read (GET /api/v1/me against tools/call
 * svc_me on /mcp) and a write that no daily cap stops (POST /api/v1/memory against svc_memory_set). Every MCP
 * request is a plain JSON-RPC POST, as the transport is stateless: whatever answering one message costs is part
 * of the figure. Rounds alternate; medians of p50, p99 and requests/s are reported with the MCP/HTTP ratios.
 *
 * The service (startEmbedded) runs in this process on a fresh PostgreSQL database and Redis prefix, both
 * removed at the end. BENCH_SECONDS (5) measured per round after BENCH_WARMUP_SECONDS (1), BENCH_ROUNDS (3).
 * Writes .bench/mcp-<timestamp>.json.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { call } from '../test/support/http';
import { runBench, type Cleanup } from './bench/cleanup';
import { startBenchService } from './bench/embeddedService';
import { runLoad } from './bench/load';
import { machineNow, mediansOf, ratioOf, roundLine, roundOf, roundsReport, writeFigures, type TargetRound } from './bench/pairs';
import { fixed } from './bench/report';
import { setting } from './bench/settings';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = setting('BENCH_SECONDS', 5, 1);
const WARMUP_SECONDS = setting('BENCH_WARMUP_SECONDS', 1, 0);
const ROUNDS = Math.floor(setting('BENCH_ROUNDS', 3, 1));
const CLIENTS = 16;
const MAX_REQUESTS_PER_ROUND = 50_000;
const REQUEST_TIMEOUT_MS = 30_000;

type Target = 'http read' | 'mcp read' | 'http write' | 'mcp write';
const TARGETS: Target[] = ['http read', 'mcp read', 'http write', 'mcp write'];

const toolCall = (name: string, args: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

async function main(cleanup: Cleanup): Promise<void> {
  const startedAt = new Date();
  const machine = machineNow();
  const server = await startBenchService(cleanup, 'mcp');
  const tag = randomBytes(3).toString('hex');
  const keys = await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      const res = await call(server.url, 'POST', '/api/v1/register', { body: { handle: `bm${tag}_${i}`, model: 'bench' } });
      if (res.status !== 201) throw new Error(`register: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.api_key as string;
    }),
  );
  process.stderr.write(`ready; ${CLIENTS} citizens\n`);

  let note = 0;
  const rounds: TargetRound<Target>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const target of TARGETS) {
      process.stderr.write(`round ${round}/${ROUNDS}: ${target} (${WARMUP_SECONDS} s warm-up + ${SECONDS} s) ... `);
      const mcp = target.startsWith('mcp');
      const read = target.endsWith('read');
      const result = await runLoad({
        url: server.url,
        path: mcp ? '/mcp' : '/api/v1/memory',
        clients: CLIENTS,
        warmupMs: WARMUP_SECONDS * 1000,
        durationMs: SECONDS * 1000,
        maxRequests: MAX_REQUESTS_PER_ROUND,
        timeoutMs: REQUEST_TIMEOUT_MS,
        headers: (client) => ({ authorization: `Bearer ${keys[client]!}`, accept: 'application/json' }),
        get: !mcp && read ? { path: () => '/api/v1/me' } : undefined,
        body: () => {
          const args = { key: `n${note++ % 50}`, value: 'a note kept by the benchmark' };
          return mcp ? (read ? toolCall('svc_me', {}) : toolCall('svc_memory_set', args)) : JSON.stringify(args);
        },
        check(_status, body) {
          const reply = JSON.parse(body) as { ok?: boolean; result?: { isError?: boolean; structuredContent?: { ok?: boolean } } };
          const ok = mcp ? reply.result?.structuredContent?.ok === true && !reply.result.isError : reply.ok === true;
          return ok ? undefined : 'not ok';
        },
      });
      const figures = roundOf(target, round, result);
      rounds.push(figures);
      process.stderr.write(roundLine(figures));
    }
  }

  const summary = mediansOf(rounds, TARGETS);
  const ratios = { read: ratioOf(summary['mcp read'], summary['http read']), write: ratioOf(summary['mcp write'], summary['http write']) };
  const title =
    `MCP tools/call vs the same endpoint over HTTP, ${CLIENTS} concurrent clients; read: GET /api/v1/me vs svc_me, write: POST /api/v1/memory vs svc_memory_set; ` +
    `${WARMUP_SECONDS} s warm-up + ${SECONDS} s per round, ${ROUNDS} round(s) alternated; ${machine.cpus} CPUs, load average ${machine.loadAverage.join(' ')}, node ${process.version}`;
  const line = (what: string, r: { p50: number; p99: number; tps: number }) => `${what}: p50 ${fixed(r.p50, 2)}x   p99 ${fixed(r.p99, 2)}x   req/s ${fixed(r.tps, 2)}x`;
  console.log(`\n${[title, '', ...roundsReport(rounds, TARGETS, summary), '', line('mcp / http read', ratios.read), line('mcp / http write', ratios.write)].join('\n')}`);
  const file = writeFigures(ROOT, 'mcp', startedAt, { settings: { clients: CLIENTS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, rounds: ROUNDS }, machine, rounds, summary, ratios,
    // Issue 29's: an MCP call at least 0.9x the HTTP call's requests/s, with p50 at most 1.2x.
    goals: { 'read.tps': { atLeast: 0.9 }, 'read.p50': { atMost: 1.2 }, 'write.tps': { atLeast: 0.9 }, 'write.p50': { atMost: 1.2 } },
  });
  console.log(`\nfigures written to ${path.relative(process.cwd(), file) || file}`);
}

const limitMs = 90_000 + ROUNDS * TARGETS.length * ((WARMUP_SECONDS + SECONDS) * 1000 + REQUEST_TIMEOUT_MS) + 60_000;
runBench('bench:mcp', limitMs, main);
