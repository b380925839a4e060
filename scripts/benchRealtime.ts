/**
 * `npm run bench:realtime`: the realtime paths of the running service against raw baselines measured in
 * the same run, each server in its own child process and the clients in another.
 *   1. /ws fan-out: a post lands and is pushed to BENCH_WS_SOCKETS (10,000) sockets; delivery latency
 *      p50/p99 from just before the POST to each socket's receipt, against a raw `ws` broadcast loop.
 *   2. BENCH_POLLS (5,000) held `/pulse?wait=25` long-polls: CPU of the server process while they are
 *      held and nothing happens (against the same process with none held; the median of 1 s windows),
 *      and wake-up latency when a post lands, against a raw http server holding as many requests and
 *      answering them on a trigger.
 * BENCH_MESSAGES (20) posts per round, BENCH_ROUNDS (2) rounds per target, alternated; BENCH_IDLE_SECONDS (5).
 * Figures go to .bench/realtime-<timestamp>.json.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { freshDatabase, tempDir } from '../test/support/env';
import { startChild, type Child } from './bench/children';
import { startServiceChild } from './bench/serviceChild';
import { distribution, median, type Distribution } from './bench/stats';

const ROOT = path.resolve(__dirname, '..');
const SOCKETS = Number(process.env.BENCH_WS_SOCKETS ?? 10_000);
const POLLS = Number(process.env.BENCH_POLLS ?? 5_000);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 5);
const CLOCK_TICKS = 100;
const now = () => performance.timeOrigin + performance.now();

interface Clients {
  next(event: string): Promise<any>;
  write(line: string): void;
  stop(): Promise<void>;
}

/** The client process, speaking JSON lines on stdout. */
function startClients(env: Record<string, string>): Promise<Clients> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'bench/liveClients.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const queue: any[] = [];
  const waiters: Array<{ event: string; resolve(line: any): void }> = [];
  readline.createInterface({ input: child.stdout! }).on('line', (text) => {
    let line: any;
    try {
      line = JSON.parse(text);
    } catch {
      return process.stderr.write(`[clients] ${text}\n`);
    }
    if (line.event === 'error') return process.stderr.write(`[clients] ${line.message}\n`);
    const event = line.bench === 'ready' ? 'ready' : line.event;
    const i = waiters.findIndex((w) => w.event === event);
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(line);
    else queue.push(line);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const clients: Clients = {
    next(event) {
      const i = queue.findIndex((l) => (l.bench === 'ready' ? 'ready' : l.event) === event);
      if (i >= 0) return Promise.resolve(queue.splice(i, 1)[0]);
      return new Promise((resolve, reject) => {
        waiters.push({ event, resolve });
        void exited.then(() => reject(new Error(`clients exited while waiting for ${event}`)));
      });
    },
    write: (line) => child.stdin!.write(`${line}\n`),
    async stop() {
      child.stdin!.end();
      child.kill('SIGTERM');
      await exited;
    },
  };
  return clients.next('ready').then(() => clients);
}

/** User + system CPU seconds of a process so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * Cores used by a process over `seconds`: the median of one-second windows, so that a collection of the
 * previous round's garbage (V8's memory reducer runs some seconds after a burst) is not counted as the
 * cost of what is being measured now.
 */
async function cpuOver(pid: number, seconds: number): Promise<number> {
  const windows: number[] = [];
  for (let i = 0; i < Math.max(1, Math.round(seconds)); i++) {
    const before = cpuSeconds(pid);
    const started = now();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    windows.push((cpuSeconds(pid) - before) / ((now() - started) / 1000));
  }
  return median(windows);
}

async function json(url: string, init?: RequestInit): Promise<any> {
  const res = await fetch(url, init);
  return res.json();
}

async function until(check: () => Promise<boolean>, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function metric(service: Child, name: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

class Poster {
  private citizens: string[] = [];
  private used = 0;
  constructor(private readonly service: Child) {}
  async post(): Promise<number> {
    if (this.used % 50 === 0) {
      const reg = await json(`${this.service.url}/api/v1/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ handle: `bench${randomBytes(6).toString('hex')}`, model: 'bench' }),
      });
      this.citizens.push(reg.api_key);
    }
    this.used += 1;
    const t0 = now();
    const res = await fetch(`${this.service.url}/api/v1/posts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.citizens[this.citizens.length - 1]}` },
      body: JSON.stringify({ body: JSON.stringify({ t0 }) }),
    });
    if (res.status !== 201) throw new Error(`post failed: ${res.status} ${await res.text()}`);
    return t0;
  }
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const db = await freshDatabase('bench_live');
  const children: Array<{ stop(): Promise<void> }> = [];
  try {
    const service = await startServiceChild(db.url, tempDir('bench-live'), { env: { REGISTER_PER_IP_PER_HOUR: '10000000' }, startupTimeoutMs: 120_000 });
    children.push(service);
    const baseline = await startChild({ name: 'baseline', entry: path.join(__dirname, 'bench/liveBaseline.ts'), cwd: ROOT, env: process.env });
    children.push(baseline);
    const poster = new Poster(service);
    await poster.post();

    // 1. /ws fan-out.
    const fanout: Record<'service' | 'baseline', number[][]> = { service: [], baseline: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of ['service', 'baseline'] as const) {
        const base = target === 'service' ? service.url : baseline.url;
        const clients = await startClients({ LIVE_MODE: 'ws', LIVE_URL: `${base.replace('http', 'ws')}/ws`, LIVE_COUNT: String(SOCKETS) });
        const latencies: number[] = [];
        for (let i = 0; i < MESSAGES; i++) {
          const t0 = target === 'service' ? await poster.post() : now();
          if (target === 'baseline') await fetch(`${baseline.url}/broadcast`, { method: 'POST', body: JSON.stringify({ t0 }) });
          const delivered = await clients.next('delivered');
          latencies.push(...delivered.latencies);
        }
        await clients.stop();
        fanout[target].push(latencies);
        const d = distribution(latencies);
        console.log(`ws fan-out  round ${round + 1} ${target.padEnd(8)} ${SOCKETS} sockets x ${MESSAGES}: p50 ${d.p50.toFixed(1)} ms  p99 ${d.p99.toFixed(1)} ms`);
      }
    }

    // 2. Held long-polls.
    const polls: Record<'service' | 'baseline', { idleCpu: number[]; heldCpu: number[]; wake: number[][] }> = {
      service: { idleCpu: [], heldCpu: [], wake: [] },
      baseline: { idleCpu: [], heldCpu: [], wake: [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of ['service', 'baseline'] as const) {
        const child = target === 'service' ? service : baseline;
        const held = target === 'service' ? () => metric(service, 'svc_pulse_held') : async () => (await json(`${baseline.url}/held`)).held as number;
        const idleCpu = await cpuOver(child.pid, IDLE_SECONDS);
        const url = target === 'service' ? `${service.url}/api/v1/pulse?wait=25` : `${baseline.url}/poll?wait=25`;
        const clients = await startClients({ LIVE_MODE: 'poll', LIVE_URL: url, LIVE_COUNT: String(POLLS) });
        await until(async () => (await held()) >= POLLS, `${POLLS} held polls on ${target}`);
        const heldCpu = await cpuOver(child.pid, IDLE_SECONDS);
        const wake: number[] = [];
        for (let i = 0; i < 5; i++) {
          await until(async () => (await held()) >= POLLS, `${POLLS} polls held again`);
          const t0 = now();
          clients.write(`t0 ${t0}`);
          if (target === 'service') await poster.post();
          else await fetch(`${baseline.url}/trigger`, { method: 'POST', body: '{}' });
          wake.push(...(await clients.next('woken')).latencies);
        }
        await clients.stop();
        polls[target].idleCpu.push(idleCpu);
        polls[target].heldCpu.push(heldCpu);
        polls[target].wake.push(wake);
        const d = distribution(wake);
        console.log(
          `long-polls  round ${round + 1} ${target.padEnd(8)} ${POLLS} held: cpu idle ${(idleCpu * 100).toFixed(1)}% -> held ${(heldCpu * 100).toFixed(1)}% of a core; ` +
            `wake p50 ${d.p50.toFixed(1)} ms  p99 ${d.p99.toFixed(1)} ms`,
        );
      }
    }

    const per = (rounds: number[][]): Distribution[] => rounds.map((r) => distribution(r));
    const med = (ds: Distribution[], key: 'p50' | 'p99') => median(ds.map((d) => d[key]));
    const ws = { service: per(fanout.service), baseline: per(fanout.baseline) };
    const wake = { service: per(polls.service.wake), baseline: per(polls.baseline.wake) };
    const summary = {
      ws_fanout: {
        sockets: SOCKETS,
        p50_ms: { service: med(ws.service, 'p50'), baseline: med(ws.baseline, 'p50') },
        p99_ms: { service: med(ws.service, 'p99'), baseline: med(ws.baseline, 'p99') },
        ratio_p50: med(ws.service, 'p50') / med(ws.baseline, 'p50'),
        ratio_p99: med(ws.service, 'p99') / med(ws.baseline, 'p99'),
      },
      long_polls: {
        polls: POLLS,
        cpu_idle_no_polls: { service: median(polls.service.idleCpu), baseline: median(polls.baseline.idleCpu) },
        cpu_idle_held: { service: median(polls.service.heldCpu), baseline: median(polls.baseline.heldCpu) },
        wake_p50_ms: { service: med(wake.service, 'p50'), baseline: med(wake.baseline, 'p50') },
        wake_p99_ms: { service: med(wake.service, 'p99'), baseline: med(wake.baseline, 'p99') },
        ratio_wake_p50: med(wake.service, 'p50') / med(wake.baseline, 'p50'),
        ratio_wake_p99: med(wake.service, 'p99') / med(wake.baseline, 'p99'),
      },
    };
    console.log(JSON.stringify(summary, null, 2));
    const out = path.join(ROOT, '.bench');
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, `realtime-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify(
        {
          startedAt: startedAt.toISOString(),
          settings: { SOCKETS, POLLS, MESSAGES, ROUNDS, IDLE_SECONDS },
          summary,
          ratios: {
            wsFanout: { p50: summary.ws_fanout.ratio_p50, p99: summary.ws_fanout.ratio_p99 },
            longPollWake: { p50: summary.long_polls.ratio_wake_p50, p99: summary.long_polls.ratio_wake_p99 },
          },
        },
        null,
        2,
      ),
    );
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
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
