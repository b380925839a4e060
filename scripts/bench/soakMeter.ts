import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { distribution, type Distribution } from './stats';

/**
 * What `bench:soak` records: each answer by operation and by minute of the measured stretch, and once a second
 * the RSS of this process (the whole service runs in it) and, each minute, its event-loop delay.
 */
export interface Cell {
  latenciesMs: number[];
  /** 5xx answers by status. */
  serverErrors: Record<string, number>;
  /** 4xx answers by status and error code (`409 idempotency_conflict`): what a client did wrong, for diagnosis. */
  clientErrors: Record<string, number>;
  /** Everything else that is not a good answer: timeouts, socket errors, a 2xx the check refused. */
  otherErrors: Record<string, number>;
  samples: Record<string, string>;
}

export interface CellFigures {
  count: number;
  ok: number;
  p50Ms: number;
  p99Ms: number;
  serverErrors: number;
  clientErrors: Record<string, number>;
  otherErrors: Record<string, number>;
}

export interface MinuteProcess {
  minute: number;
  /** Mean and highest of the once-a-second samples, MB. */
  rssMeanMb: number;
  rssMaxMb: number;
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  /** CPU time this process used in the minute (user + system) over the minute's wall time: 100 is one core busy. */
  cpuPercent: number;
  /**
   * At the end of the minute, MB: V8's heap as reserved and as in use, and memory outside it that V8 knows of
   * (buffers); the rest of RSS is native. A heap that grows in reserve while its use holds is V8 sizing, not a leak.
   */
  heapTotalMb: number;
  heapUsedMb: number;
  externalMb: number;
  /** With BENCH_SOAK_LIVE_HEAP=1: the heap in use right after a full collection, what is really held. */
  liveHeapMb?: number;
}

/** A full collection on demand, for the live-heap figure (it holds the loop for a moment, so only when asked). */
const fullGc = process.env.BENCH_SOAK_LIVE_HEAP === '1' ? exposedGc() : undefined;

function exposedGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const emptyCell = (): Cell => ({ latenciesMs: [], serverErrors: {}, clientErrors: {}, otherErrors: {}, samples: {} });
const bump = (counts: Record<string, number>, key: string) => (counts[key] = (counts[key] ?? 0) + 1);
const MB = 1024 * 1024;

export class SoakMeter {
  /** cells[minute][operation] */
  readonly cells: Array<Record<string, Cell>> = [];

  constructor(private readonly measureFrom: number) {}

  minuteOf(sentAt: number): number {
    return Math.floor((sentAt - this.measureFrom) / 60_000);
  }

  private cell(sentAt: number, op: string): Cell {
    const minute = this.minuteOf(sentAt);
    const row = (this.cells[minute] ??= {});
    return (row[op] ??= emptyCell());
  }

  good(op: string, sentAt: number, latencyMs: number): void {
    this.cell(sentAt, op).latenciesMs.push(latencyMs);
  }

  /** An HTTP answer that is not good: 5xx, 4xx (labelled with its error code) or a 2xx the check refused (`verdict`). */
  bad(op: string, sentAt: number, status: number, body: string, verdict?: string): void {
    const cell = this.cell(sentAt, op);
    let label: string;
    if (status >= 500) bump(cell.serverErrors, (label = String(status)));
    else if (status >= 400) bump(cell.clientErrors, (label = `${status} ${errorCode(body)}`));
    else bump(cell.otherErrors, (label = verdict ?? `HTTP ${status}`));
    cell.samples[label] ??= body.slice(0, 300);
  }

  failed(op: string, sentAt: number, kind: string, message: string): void {
    const cell = this.cell(sentAt, op);
    bump(cell.otherErrors, kind);
    cell.samples[kind] ??= message.slice(0, 300);
  }

  /** Figures of one cell, of one operation over every minute (`minute` undefined), or of every operation of a minute. */
  figures(op: string | undefined, minute: number | undefined): CellFigures {
    const cells = this.cells.flatMap((row, m) => (minute === undefined || m === minute ? Object.entries(row) : [])).filter(([o]) => op === undefined || o === op).map(([, c]) => c);
    const latencies = cells.flatMap((c) => c.latenciesMs);
    const d: Distribution = distribution(latencies);
    const sum = (pick: (c: Cell) => Record<string, number>) => {
      const out: Record<string, number> = {};
      for (const c of cells) for (const [k, n] of Object.entries(pick(c))) out[k] = (out[k] ?? 0) + n;
      return out;
    };
    const serverErrors = Object.values(sum((c) => c.serverErrors)).reduce((a, b) => a + b, 0);
    const clientErrors = sum((c) => c.clientErrors);
    const otherErrors = sum((c) => c.otherErrors);
    const failed = serverErrors + [...Object.values(clientErrors), ...Object.values(otherErrors)].reduce((a, b) => a + b, 0);
    return { count: latencies.length + failed, ok: latencies.length, p50Ms: d.p50, p99Ms: d.p99, serverErrors, clientErrors, otherErrors };
  }

  samples(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const row of this.cells) for (const [op, cell] of Object.entries(row)) for (const [label, text] of Object.entries(cell.samples)) out[`${op} ${label}`] ??= text;
    return out;
  }
}

function errorCode(body: string): string {
  try {
    return String((JSON.parse(body) as { error?: { code?: unknown } }).error?.code ?? 'no code');
  } catch {
    return 'not JSON';
  }
}

/**
 * RSS once a second and the event-loop delay, per minute from `measureFrom` (performance.now()): the loop the
 * service answers on is this one, so its delay is what every request waits before its turn.
 */
export class ProcessSampler {
  private readonly rss: number[][] = [];
  private readonly delays: Array<{ p99Ms: number; maxMs: number; cpuPercent: number; heapTotalMb: number; heapUsedMb: number; externalMb: number; liveHeapMb?: number }> = [];
  private readonly histogram = monitorEventLoopDelay({ resolution: 10 });
  private readonly timer: NodeJS.Timeout;
  private minute = 0;
  private cpuFrom = { usage: process.cpuUsage(), at: performance.now() };

  constructor(private readonly measureFrom: number) {
    this.histogram.enable();
    this.timer = setInterval(() => this.sample(), 1_000);
  }

  private sample(): void {
    const minute = Math.floor((performance.now() - this.measureFrom) / 60_000);
    if (minute < 0) {
      // The warm-up's delay and CPU are not the first minute's.
      this.histogram.reset();
      this.cpuFrom = { usage: process.cpuUsage(), at: performance.now() };
      return;
    }
    if (minute > this.minute) this.closeMinute();
    this.minute = minute;
    (this.rss[minute] ??= []).push(process.memoryUsage().rss / MB);
  }

  private closeMinute(): void {
    const used = process.cpuUsage(this.cpuFrom.usage);
    const now = performance.now();
    const cpuPercent = ((used.user + used.system) / 1000 / (now - this.cpuFrom.at)) * 100;
    const memory = process.memoryUsage();
    this.delays[this.minute] = {
      p99Ms: this.histogram.percentile(99) / 1e6,
      maxMs: this.histogram.max / 1e6,
      cpuPercent,
      heapTotalMb: memory.heapTotal / MB,
      heapUsedMb: memory.heapUsed / MB,
      externalMb: memory.external / MB,
    };
    if (fullGc) {
      fullGc();
      this.delays[this.minute]!.liveHeapMb = process.memoryUsage().heapUsed / MB;
    }
    this.histogram.reset();
    this.cpuFrom = { usage: process.cpuUsage(), at: now };
  }

  /** Stops sampling, at the end of the measured stretch; the minute under way closes with what it has. */
  stop(): MinuteProcess[] {
    clearInterval(this.timer);
    this.closeMinute();
    this.histogram.disable();
    return this.rss.map((samples, minute) => ({
      minute: minute + 1,
      rssMeanMb: samples.reduce((a, b) => a + b, 0) / samples.length,
      rssMaxMb: Math.max(...samples),
      eventLoopDelayP99Ms: this.delays[minute]?.p99Ms ?? Number.NaN,
      eventLoopDelayMaxMs: this.delays[minute]?.maxMs ?? Number.NaN,
      cpuPercent: this.delays[minute]?.cpuPercent ?? Number.NaN,
      heapTotalMb: this.delays[minute]?.heapTotalMb ?? Number.NaN,
      heapUsedMb: this.delays[minute]?.heapUsedMb ?? Number.NaN,
      externalMb: this.delays[minute]?.externalMb ?? Number.NaN,
      liveHeapMb: this.delays[minute]?.liveHeapMb,
    }));
  }
}
