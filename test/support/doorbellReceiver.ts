import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import https from 'node:https';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { generate } from 'selfsigned';
import { tempDir } from './env';

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
 * A real HTTPS webhook receiver on 127.0.0.1 with a freshly made self-signed certificate, whose PEM file
 * (`caFile`) a test passes as DOORBELL_CA_FILE. Answers 204 unless a path is told otherwise; a test
 * waits on what arrives, never on time.
 */
export class DoorbellReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly arrivals = new EventEmitter();
  private readonly answers = new Map<string, number>();
  private readonly held = new Map<string, Array<() => void>>();
  private readonly holding = new Set<string>();

  private constructor(
    private readonly server: https.Server,
    readonly port: number,
    readonly caFile: string,
  ) {
    this.arrivals.setMaxListeners(0);
  }

  static async start(): Promise<DoorbellReceiver> {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 2, value: RECEIVER_NAME },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    });
    const caFile = path.join(tempDir('doorbell-ca'), 'receiver.pem');
    fs.writeFileSync(caFile, pems.cert);
    let receiver!: DoorbellReceiver;
    const server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver.receive(req.url ?? '/', req.headers, Buffer.concat(chunks), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    receiver = new DoorbellReceiver(server, (server.address() as AddressInfo).port, caFile);
    return receiver;
  }

  url(pathname: string, host = '127.0.0.1'): string {
    return `https://${host}:${this.port}${pathname}`;
  }

  /** Answer `status` on this path from now on. */
  answer(pathname: string, status: number): void {
    this.answers.set(pathname, status);
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
    this.requests.push({ path: pathname, headers, raw, json, at: Date.now() });
    this.arrivals.emit('request');
    const answer = () => {
      res.writeHead(this.answers.get(pathname) ?? 204);
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
    if (done(this.requests)) return Promise.resolve(this.requests);
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done(this.requests)) return;
        cleanup();
        resolve(this.requests);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the receiver did not get what was awaited within ${timeoutMs} ms; it got ${JSON.stringify(this.requests.map((r) => [r.path, r.json?.kind, r.json?.seq]))}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.arrivals.off('request', check);
      };
      this.arrivals.on('request', check);
    });
  }

  async close(): Promise<void> {
    for (const pathname of [...this.holding]) this.release(pathname);
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
