import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort } from './ports';
import { killHard } from './spawn';

const REDIS_SERVER = process.env.TEST_REDIS_SERVER ?? '/usr/bin/redis-server';

/** A redis-server of the test's own, on a free port, that the test can kill -9 and start again on the same port. */
export class PrivateRedis {
  private child?: ChildProcess;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async restart(): Promise<void> {
    const child = spawn(REDIS_SERVER, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${output}`));
      });
    });
  }

  /** SIGSTOP: the server keeps its connections open and answers nothing, as a hung or swapped-out one does. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  async kill(): Promise<void> {
    if (this.child) await killHard(this.child);
  }
}

/**
 * A TCP proxy of the test's own on a free port, in front of a server the test must not stop (the PostgreSQL
 * every test shares). `stop` cuts every connection through it and refuses new ones, so what connects through
 * it sees its server gone, as if it had stopped; `start` lets connections through again, on the same port.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** A proxy to the host and port of `url` (e.g. a database URL), already started. */
  static async to(url: string): Promise<TcpProxy> {
    const { hostname, port } = new URL(url);
    const proxy = new TcpProxy(await freePort(), { host: hostname, port: Number(port) });
    await proxy.start();
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  async start(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      const cut = () => {
        client.destroy();
        upstream.destroy();
      };
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
        socket.on('error', cut);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise((resolve) => server.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

/** The p-th percentile of `values`, for the figures an outage test reports. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
