import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { send } from './load';
import type { SoakMeter } from './soakMeter';

export interface PacedRequest {
  op: string;
  method: 'GET' | 'POST';
  path: string;
  body: string;
  headers: Record<string, string>;
}

export interface PacedOptions<R extends PacedRequest> {
  url: string;
  clients: number;
  /** Requests per second offered by all clients together, whatever the answers take. */
  rps: number;
  warmupMs: number;
  durationMs: number;
  timeoutMs: number;
  /** A client with this many requests unanswered skips its turn (counted) rather than pile on without end. */
  maxInFlightPerClient: number;
  next(client: number): R;
  /** Judges a 2xx answer: an error label, or undefined when it is good. */
  judge(request: R, client: number, body: string): string | undefined;
  meter: SoakMeter;
  /** When the schedule starts (performance.now()); the measured stretch starts `warmupMs` later. */
  startAt: number;
}

export interface PacedResult {
  sent: number;
  /** Turns skipped because the client already had `maxInFlightPerClient` requests unanswered, by measured minute. */
  skippedByMinute: number[];
  /** How late each measured turn fired against its schedule, ms: the event loop the service shares with the clients. */
  turnLatenessMs: number[];
}

/**
 * Open-loop load: each client fires on a fixed schedule (rps / clients per second, clients spread evenly over the
 * interval), without waiting for its previous answer, so the offered rate stays fixed however slow the service
 * gets; a slower service shows as latency and in-flight requests, not as fewer requests. Latency is timed from
 * the moment a request is sent.
 */
export async function runPaced<R extends PacedRequest>(options: PacedOptions<R>): Promise<PacedResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients * options.maxInFlightPerClient });
  const intervalMs = (options.clients / options.rps) * 1000;
  const started = options.startAt;
  const measureFrom = started + options.warmupMs;
  const deadline = measureFrom + options.durationMs;
  const result: PacedResult = { sent: 0, skippedByMinute: [], turnLatenessMs: [] };
  const inFlight = new Array<number>(options.clients).fill(0);
  const pending = new Set<Promise<void>>();

  const fire = async (client: number, request: R, measured: boolean) => {
    const sentAt = performance.now();
    const target = new URL(request.path, options.url);
    try {
      const answer = await send(agent, target, request.method, request.body, options.timeoutMs, request.headers);
      const latency = performance.now() - sentAt;
      const good = answer.status >= 200 && answer.status < 300;
      const verdict = good ? options.judge(request, client, answer.body) : undefined;
      if (!measured) return;
      if (good && !verdict) options.meter.good(request.op, sentAt, latency);
      else options.meter.bad(request.op, sentAt, answer.status, answer.body, verdict);
    } catch (error) {
      if (measured) options.meter.failed(request.op, sentAt, (error as NodeJS.ErrnoException).code ?? 'request error', error instanceof Error ? error.message : String(error));
    }
  };

  const clientLoop = async (client: number) => {
    for (let turn = 0; ; turn++) {
      const due = started + (client / options.clients) * intervalMs + turn * intervalMs;
      if (due >= deadline) return;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const measured = due >= measureFrom;
      // A timer can fire a fraction of a millisecond early: that is on time.
      if (measured) result.turnLatenessMs.push(Math.max(0, performance.now() - due));
      if (inFlight[client]! >= options.maxInFlightPerClient) {
        if (measured) {
          const minute = options.meter.minuteOf(due);
          result.skippedByMinute[minute] = (result.skippedByMinute[minute] ?? 0) + 1;
        }
        continue;
      }
      inFlight[client]!++;
      result.sent++;
      const request = options.next(client);
      const done = fire(client, request, measured).finally(() => {
        inFlight[client]!--;
        pending.delete(done);
      });
      pending.add(done);
    }
  };

  try {
    await Promise.all(Array.from({ length: options.clients }, (_, client) => clientLoop(client)));
    await Promise.all([...pending]);
  } finally {
    agent.destroy();
  }
  for (let m = 0; m < result.skippedByMinute.length; m++) result.skippedByMinute[m] ??= 0;
  return result;
}
