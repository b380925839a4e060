import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { PROJECTED_CHANNEL, type Bus, type Notification } from '@svc/bus';
import { PUSHED_KINDS, kindOf } from '@svc/domain';
import type { LedgerEntry } from '@svc/ledger';
import { entries } from '@svc/projections';
import type { Kysely } from 'kysely';

/** A client whose unsent backlog passes this is dropped: a slow reader never grows the server's memory. */
export const MAX_BUFFERED_BYTES = 1 << 20;
/** Client messages are only ever a ping. */
export const MAX_CLIENT_MESSAGE_BYTES = 4096;
const HEARTBEAT_MS = 30_000;
const REPLAY_PAGE = 500;
const REPLAY_FLUSH_TIMEOUT_MS = 30_000;

const PUSHED = new Set<string>(PUSHED_KINDS);

interface Client {
  ws: WebSocket;
  alive: boolean;
  /** Live messages held back while the missed ones are replayed. */
  pending?: Array<{ seq: number; frame: string }>;
  lastSeq: number;
}

/** The frame of one pushed entry: serialised once, sent to every socket as is. */
export function frameOf(entry: LedgerEntry): string {
  return JSON.stringify({ kind: kindOf(entry.type), seq: entry.seq, at: entry.at, type: entry.type, actor: entry.actor, data: entry.data, hash: entry.hash });
}

function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ ok: false, error: { code, message } });
  const reason = status === 400 ? 'Bad Request' : status === 404 ? 'Not Found' : 'Service Unavailable';
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/**
 * GET /ws: pushes post, action, bounty and buyback entries from the bus to every socket of this process.
 * `?since=<seq>` first replays the missed entries from the read model, holding live ones back, then goes
 * live with neither a gap nor a repeat. Client messages other than a ping are dropped unread.
 */
export class WsHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE_BYTES, perMessageDeflate: false, clientTracking: false });
  private readonly clients = new Set<Client>();
  private unsubscribe?: () => Promise<void>;
  private heartbeat?: NodeJS.Timeout;

  constructor(
    private readonly bus: Bus,
    private readonly db: Kysely<any>,
    private readonly schema: string,
    private readonly options: { maxBufferedBytes?: number; heartbeatMs?: number } = {},
  ) {}

  get size(): number {
    return this.clients.size;
  }

  async start(server: http.Server): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(PROJECTED_CHANNEL, (message) => this.onProjected(message));
    server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
    this.heartbeat = setInterval(() => {
      for (const client of this.clients) {
        if (!client.alive) {
          client.ws.terminate();
          continue;
        }
        client.alive = false;
        client.ws.ping();
      }
    }, this.options.heartbeatMs ?? HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/ws') return refuse(socket, 404, 'not_found', `no WebSocket at ${url.pathname}; connect to /ws`);
    let since: number | undefined;
    const raw = url.searchParams.get('since');
    if (raw !== null) {
      since = Number(raw);
      if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(since) || since < -1) {
        return refuse(socket, 400, 'invalid_request', 'since must be a ledger seq (an integer >= -1)');
      }
    }
    if (!this.unsubscribe) return refuse(socket, 503, 'unavailable', 'the event stream is stopping');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, since));
  }

  private accept(ws: WebSocket, since: number | undefined): void {
    const client: Client = { ws, alive: true, lastSeq: since ?? -1, pending: since === undefined ? undefined : [] };
    this.clients.add(client);
    ws.on('pong', () => (client.alive = true));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let kind: unknown;
      try {
        kind = (JSON.parse(data.toString()) as { kind?: unknown })?.kind;
      } catch {
        return;
      }
      if (kind === 'ping') this.send(client, JSON.stringify({ kind: 'pong', at: Date.now() }));
    });
    ws.on('close', () => this.clients.delete(client));
    ws.on('error', () => ws.terminate());
    if (since !== undefined) void this.replay(client, since);
  }

  /** Sends, or drops the client whose backlog is past the bound. */
  private send(client: Client, frame: string): boolean {
    if (client.ws.readyState !== client.ws.OPEN) return false;
    if (client.ws.bufferedAmount > (this.options.maxBufferedBytes ?? MAX_BUFFERED_BYTES)) {
      client.ws.terminate();
      this.clients.delete(client);
      return false;
    }
    client.ws.send(frame);
    return true;
  }

  private onProjected(message: Notification): void {
    const list = (message.entries ?? []) as LedgerEntry[];
    for (const entry of list) {
      if (!PUSHED.has(kindOf(entry.type))) continue;
      const frame = frameOf(entry);
      for (const client of this.clients) {
        if (client.pending) client.pending.push({ seq: entry.seq, frame });
        else if (entry.seq > client.lastSeq) this.send(client, frame);
      }
    }
  }

  private async replay(client: Client, since: number): Promise<void> {
    let after = since;
    try {
      for (;;) {
        const page = await entries.entriesSince(this.db, this.schema, { afterSeq: after, limit: REPLAY_PAGE });
        for (const entry of page) {
          after = entry.seq;
          if (PUSHED.has(entry.kind) && !this.send(client, frameOf(entry))) return;
        }
        client.lastSeq = after;
        await this.flushed(client);
        if (page.length < REPLAY_PAGE) break;
      }
      const held = client.pending ?? [];
      client.pending = undefined;
      for (const { seq, frame } of held) {
        if (seq <= after) continue;
        if (!this.send(client, frame)) return;
        after = seq;
      }
      client.lastSeq = after;
    } catch {
      client.ws.close(1011, 'replay failed; reconnect with since');
    }
  }

  /** Waits until the socket has taken what was sent, so a replay never outruns a slow reader's bound. */
  private async flushed(client: Client): Promise<void> {
    const deadline = Date.now() + REPLAY_FLUSH_TIMEOUT_MS;
    while (client.ws.readyState === client.ws.OPEN && client.ws.bufferedAmount > 0) {
      if (Date.now() > deadline) {
        client.ws.terminate();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.unsubscribe?.();
    this.unsubscribe = undefined;
    const open = [...this.clients];
    this.clients.clear();
    await Promise.all(
      open.map(
        (client) =>
          new Promise<void>((resolve) => {
            // A client that does not answer the close handshake promptly is cut off.
            const timer = setTimeout(() => client.ws.terminate(), 1000);
            client.ws.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            client.ws.close(1001, 'server shutting down');
          }),
      ),
    );
  }
}
