import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface LoadOptions {
  url: string;
  path: string;
  clients: number;
  warmupMs: number;
  durationMs: number;
  /** Hard cap on requests sent (warm-up included), whatever the duration. */
  maxRequests: number;
  /** A request that takes longer is abandoned and counted as an error. */
  timeoutMs: number;
  /** The body of the next POST from client number `client` (0-based). */
  body(client: number): string;
  /** Extra headers of the next request of client number `client` (its own API key, say); called before `body`. */
  headers?(client: number): Record<string, string>;
  /** GET instead of POST: `path()` then picks each request's path and query. */
  get?: { path(): string };
  /**
   * Judges a 2xx answer: returns an error label, or undefined when it is good. Called with the arrival
   * time (performance.now()), whether the request belongs to the measured window and when it was sent.
   */
  check?(status: number, body: string, arrivedAt: number, measured: boolean, sentAt: number): string | undefined;
}

export interface LoadResult {
  /** Requests started inside the measured window and answered (well or not). */
  requests: number;
  ok: number;
  errors: Record<string, number>;
  /** The first answer of each error kind, cut short, for diagnosis. */
  errorSamples: Record<string, string>;
  /** From the end of the warm-up to the last measured answer. */
  elapsedMs: number;
  /** Latency of each good measured answer, milliseconds. */
  latenciesMs: number[];
  /** Time to the first byte (the status line and headers) of each good measured answer, milliseconds. */
  firstByteMs: number[];
  /** Requests sent in total, warm-up included. */
  sent: number;
}

export interface Answer {
  status: number;
  body: string;
  /** When the status line and headers arrived (performance.now()). */
  headersAt: number;
}

/**
 * `clients` loops, each sending one request at a time over a shared keep-alive agent with one socket
 * per client. Requests started during the warm-up are sent but not counted.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.path, options.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients, maxFreeSockets: options.clients });
  const result: LoadResult = { requests: 0, ok: 0, errors: {}, errorSamples: {}, elapsedMs: 0, latenciesMs: [], firstByteMs: [], sent: 0 };
  const started = performance.now();
  const measureFrom = started + options.warmupMs;
  const deadline = measureFrom + options.durationMs;
  let lastAnswer = measureFrom;

  const fail = (kind: string, sample: string) => {
    result.errors[kind] = (result.errors[kind] ?? 0) + 1;
    result.errorSamples[kind] ??= sample.slice(0, 300);
  };

  async function client(index: number): Promise<void> {
    for (;;) {
      const now = performance.now();
      if (now >= deadline || result.sent >= options.maxRequests) return;
      result.sent++;
      const measured = now >= measureFrom;
      const headers = options.headers?.(index) ?? {};
      let answer: Answer;
      try {
        answer = options.get
          ? await send(agent, new URL(options.get.path(), options.url), 'GET', '', options.timeoutMs, headers)
          : await send(agent, target, 'POST', options.body(index), options.timeoutMs, headers);
      } catch (error) {
        if (measured) {
          result.requests++;
          lastAnswer = performance.now();
          const code = (error as NodeJS.ErrnoException).code ?? 'request error';
          fail(code, error instanceof Error ? error.message : String(error));
        }
        continue;
      }
      const arrivedAt = performance.now();
      const verdict =
        answer.status >= 200 && answer.status < 300 ? options.check?.(answer.status, answer.body, arrivedAt, measured, now) : `HTTP ${answer.status}`;
      if (!measured) continue;
      result.requests++;
      lastAnswer = arrivedAt;
      if (verdict) {
        fail(verdict, answer.body);
      } else {
        result.ok++;
        result.latenciesMs.push(arrivedAt - now);
        result.firstByteMs.push(answer.headersAt - now);
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: options.clients }, (_, index) => client(index)));
  } finally {
    agent.destroy();
  }
  result.elapsedMs = Math.max(lastAnswer - measureFrom, 1);
  return result;
}

/** One request over `agent`; rejects on a socket error or after `timeoutMs` with no answer (code `timeout`). */
export function send(agent: http.Agent, target: URL, method: 'GET' | 'POST', body: string, timeoutMs: number, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      target,
      {
        method,
        agent,
        headers: method === 'POST' ? { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : headers,
      },
      (res) => {
        const headersAt = performance.now();
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headersAt }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'timeout' })));
    req.on('error', reject);
    req.end(body);
  });
}
