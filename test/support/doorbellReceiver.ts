import { createHmac } from 'node:crypto';
import { EventEmitter } from 'node:events';
import https from 'node:https';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { startLocalHttps } from './tls';
import type { RecordedAttempt } from '@svc/app-workers';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received, which a signature is checked over. */
  raw: Buffer;
  json: any;
  at: number;
}

/** The name a test can make resolve to 127.0.0.1 (through a worker's `lookup`), covered by the certificate. */
export const RECEIVER_NAME = 'hooks.example.com';

/**
 * A list that a test waits on: each `push` re-checks the waiting conditions, so a wait ends on the
 * arrival that satisfies it, not on a timer. The timeout only bounds a wait that would never end.
 */
export class Arrivals<T> {
  readonly items: T[] = [];
  private readonly emitter = new EventEmitter();

  constructor(private readonly describe: (items: T[]) => string = (items) => `${items.length} items`) {
    this.emitter.setMaxListeners(0);
  }

  push(item: T): void {
    this.items.push(item);
    this.emitter.emit('arrival');
  }

  clear(): void {
    this.items.splice(0);
  }

  /** Resolves once `done(items)` holds; rejects after `timeoutMs` naming what did arrive. */
  waitFor(done: (items: T[]) => boolean, timeoutMs = 20_000): Promise<T[]> {
    if (done(this.items)) return Promise.resolve(this.items);
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done(this.items)) return;
        cleanup();
        resolve(this.items);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`what was awaited did not arrive within ${timeoutMs} ms; got ${this.describe(this.items)}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.emitter.off('arrival', check);
      };
      this.emitter.on('arrival', check);
    });
  }
}

export type AttemptSeen = RecordedAttempt;

/**
 * Attempts as the doorbell worker records them: pass `record` as its `onAttemptRecorded`. It is called
 * after the attempt's transaction commits, so the delivery log already shows what it reports.
 */
export class RecordedAttempts extends Arrivals<AttemptSeen> {
  constructor() {
    super((items) => JSON.stringify(items.map((a) => [a.doorbellId.slice(-6), a.seq, a.ok, a.status, a.failures])));
  }

  readonly record = (attempt: AttemptSeen): void => this.push(attempt);

  of(doorbellId: string): AttemptSeen[] {
    return this.items.filter((a) => a.doorbellId === doorbellId);
  }
}

/**
 * A real HTTPS webhook receiver on 127.0.0.1 with a freshly made self-signed certificate, whose PEM file
 * (`caFile`) a test passes as DOORBELL_CA_FILE. Answers 204 unless a path is told otherwise; a test
 * waits on what arrives, never on time.
 */
export class DoorbellReceiver {
  private readonly arrivals = new Arrivals<ReceivedRequest>((requests) => JSON.stringify(requests.map((r) => [r.path, r.json?.kind, r.json?.seq])));
  readonly requests: ReceivedRequest[] = this.arrivals.items;
  private readonly answers = new Map<string, number>();
  private readonly outages = new Map<string, { status: number; forMs: number; until?: number }>();
  private readonly held = new Map<string, Array<() => void>>();
  private readonly holding = new Set<string>();

  private constructor(
    private readonly server: https.Server,
    readonly port: number,
    readonly caFile: string,
  ) {}

  static async start(): Promise<DoorbellReceiver> {
    let receiver!: DoorbellReceiver;
    const { server, port, caFile } = await startLocalHttps(RECEIVER_NAME, 'doorbell-ca', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver.receive(req.url ?? '/', req.headers, Buffer.concat(chunks), res));
    });
    receiver = new DoorbellReceiver(server, port, caFile);
    return receiver;
  }

  url(pathname: string, host = '127.0.0.1'): string {
    return `https://${host}:${this.port}${pathname}`;
  }

  /** Answer `status` on this path from now on. */
  answer(pathname: string, status: number): void {
    this.answers.set(pathname, status);
  }

  /**
   * A brief outage: answer `status` on this path for `forMs` counted from the first request that arrives
   * on it (so the first attempt always meets it, however late it comes), then as before.
   */
  outage(pathname: string, status: number, forMs: number): void {
    this.outages.set(pathname, { status, forMs });
  }

  /** Keep requests on this path waiting for an answer until `release`. */
  hold(pathname: string): void {
    this.holding.add(pathname);
  }

  release(pathname: string): void {
    this.holding.delete(pathname);
    for (const answer of this.held.get(pathname)?.splice(0) ?? []) answer();
  }

  on(pathname: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === pathname);
  }

  private receive(pathname: string, headers: IncomingHttpHeaders, raw: Buffer, res: ServerResponse): void {
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      json = undefined;
    }
    const at = Date.now();
    const outage = this.outages.get(pathname);
    if (outage) outage.until ??= at + outage.forMs;
    const outageStatus = outage && at < outage.until! ? outage.status : undefined;
    this.arrivals.push({ path: pathname, headers, raw, json, at });
    const answer = () => {
      res.writeHead(outageStatus ?? this.answers.get(pathname) ?? 204);
      res.end();
    };
    if (this.holding.has(pathname)) {
      const queue = this.held.get(pathname) ?? [];
      queue.push(answer);
      this.held.set(pathname, queue);
    } else {
      answer();
    }
  }

  /** Resolves once `done(requests)` holds; rejects after `timeoutMs` naming what did arrive. */
  waitFor(done: (requests: ReceivedRequest[]) => boolean, timeoutMs = 20_000): Promise<ReceivedRequest[]> {
    return this.arrivals.waitFor(done, timeoutMs);
  }

  /** Forgets what arrived (between tests). */
  clear(): void {
    this.arrivals.clear();
  }

  async close(): Promise<void> {
    for (const pathname of [...this.holding]) this.release(pathname);
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/**
 * The `x-svc-signature` a doorbell with `secret` sends for `request`, at the time its header names (`t=<ms>,v1=<hex>`),
 * worked out here from the scheme, not from the worker's code.
 */
export function timestampedSignature(request: ReceivedRequest, secret: string): string {
  const t = /^t=(\d+),/.exec(String(request.headers['x-svc-signature']))?.[1] ?? 'missing';
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.`).update(request.raw).digest('hex')}`;
}
