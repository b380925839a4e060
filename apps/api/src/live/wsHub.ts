import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData } from 'ws';
import { PROJECTED_CHANNEL, type Bus, type Notification } from '@svc/bus';
import { PUSHED_KINDS, kindOf, untrustedOfEntry } from '@svc/domain';
import type { HeadReader, LedgerEntry } from '@svc/ledger';
import { announces, entries } from '@svc/projections';
import type { Kysely } from 'kysely';
import type { CheckpointFollower } from '../projectionWatcher';

/**
 * A client whose backlog (what the socket has not sent yet, plus live frames held back during its replay)
 * passes this is dropped: a slow reader never grows the server's memory.
 */
export const MAX_BUFFERED_BYTES = 1 << 20;
/** Client messages are only ever a ping. */
export const MAX_CLIENT_MESSAGE_BYTES = 4096;
const HEARTBEAT_MS = 30_000;
const REPLAY_PAGE = 500;
/** A replay that a client does not take within this is given up (the client is dropped). */
const REPLAY_DRAIN_TIMEOUT_MS = 30_000;
const OPEN = 1;
/**
 * With the bus up, a checkpoint that moved without its announcement arriving within this is read from the
 * read model instead (an announcement lost on the way).
 */
const ANNOUNCEMENT_GRACE_MS = 250;

const PUSHED = new Set<string>(PUSHED_KINDS);

/** The socket as the hub uses it: a `ws` WebSocket (a stand-in in unit tests). */
export interface PushSocket {
  readonly readyState: number;
  readonly bufferedAmount: number;
  /** `written` is called once the frame has left for the network (or the socket failed). */
  send(frame: string, written?: (error?: Error) => void): void;
  ping(): void;
  terminate(): void;
  close(code?: number, reason?: string): void;
  on(event: 'message', listener: (data: RawData, isBinary: boolean) => void): this;
  on(event: 'pong' | 'close', listener: () => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  once(event: 'close', listener: () => void): this;
}

/** Where a replay reads what a client missed, and how far the ledger goes. */
export interface ReplaySource {
  /** Ledger entries after `seq`, in order, at most `limit`, each with its kind. */
  entriesAfter(seq: number, limit: number): Promise<Array<LedgerEntry & { kind: string }>>;
  /** The seq of the ledger head (-1 when it is empty). */
  head(): Promise<number>;
}

/** The read model a replay reads: the hub pushes what the projector announces of it, and nothing announced of another alone. */
export const REPLAYED_READ_MODEL = 'entries';

/** Replays from the `entries` read model; the head comes from the event store itself. */
export function readModelSource(db: Kysely<any>, schema: string, ledgerHead: HeadReader): ReplaySource {
  return {
    entriesAfter: (seq, limit) => entries.entriesSince(db, schema, { afterSeq: seq, limit }),
    head: () => ledgerHead.head(),
  };
}

export interface WsHubOptions {
  /**
   * The position of the read model replays read (REPLAYED_READ_MODEL): with it, the hub notices announcements
   * it missed (a gap in seqs, a bus that is down, a checkpoint that moved unannounced) and pushes the missed
   * entries from the read model.
   */
  checkpoint?: CheckpointFollower;
  maxBufferedBytes?: number;
  heartbeatMs?: number;
  replayDrainTimeoutMs?: number;
}

interface Client {
  ws: PushSocket;
  alive: boolean;
  /** Live frames held back while the missed ones are replayed, and their size in bytes. */
  pending?: Array<{ seq: number; frame: string }>;
  pendingBytes: number;
  lastSeq: number;
  /** Resolves when the client is closed or dropped. */
  gone: Promise<void>;
  leave(): void;
}

/** The frame of one pushed entry, marked as the read models mark its words: serialised once, sent to every socket as is. */
export function frameOf(entry: LedgerEntry): string {
  const untrusted = untrustedOfEntry(entry.type, entry.data);
  return JSON.stringify({ kind: kindOf(entry.type, entry.data), seq: entry.seq, at: entry.at, type: entry.type, actor: entry.actor, data: entry.data, hash: entry.hash, ...(untrusted ? { untrusted } : {}) });
}

function refuse(socket: Duplex, status: number, code: string, message: string, details: Record<string, unknown> = {}): void {
  const body = JSON.stringify({ ok: false, error: { code, message, ...details } });
  const reason = status === 400 ? 'Bad Request' : status === 404 ? 'Not Found' : 'Service Unavailable';
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/**
 * GET /ws: pushes post, action, bounty and buyback entries from the bus to every socket of this process;
 * what the bus missed (it is down, or lost an announcement) is read from the read model, in order.
 * `?since=<seq>` first replays the missed entries from the read model, holding live ones back, then goes
 * live with neither a gap nor a repeat. Client messages other than a ping are dropped unread.
 */
export class WsHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE_BYTES, perMessageDeflate: false, clientTracking: false });
  private readonly clients = new Set<Client>();
  private readonly bound: number;
  /** A replay writes while the socket holds less than this, so live frames held back meanwhile have room under the bound. */
  private readonly replayHighWater: number;
  /** The highest seq known to be on the ledger; a `since` past it is checked against the event store. */
  private knownHead = -1;
  private unsubscribe?: () => Promise<void>;
  private heartbeat?: NodeJS.Timeout;
  /** The last seq pushed to the live stream (with a checkpoint to follow). */
  private delivered = -1;
  private pulling = false;
  private pullAgain = false;
  private stopAdvance?: () => void;
  private releaseFollow?: () => void;
  /** The highest checkpoint seen move, and the one timer that checks its announcement came. */
  private movedTo = -1;
  private graceTimer?: NodeJS.Timeout;

  constructor(
    private readonly bus: Bus,
    private readonly source: ReplaySource,
    private readonly options: WsHubOptions = {},
  ) {
    this.bound = options.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
    this.replayHighWater = Math.floor(this.bound / 4);
  }

  get size(): number {
    return this.clients.size;
  }

  /** Bytes held for clients: live frames waiting for a replay to end, and what the sockets have not sent. */
  get backlogBytes(): number {
    let total = 0;
    for (const client of this.clients) total += client.pendingBytes + client.ws.bufferedAmount;
    return total;
  }

  async start(server?: http.Server): Promise<void> {
    const checkpoint = this.options.checkpoint;
    if (checkpoint) {
      this.delivered = checkpoint.seq;
      this.stopAdvance = checkpoint.onAdvance((seq) => this.moved(seq));
    }
    this.unsubscribe = await this.bus.subscribe(PROJECTED_CHANNEL, (message) => this.onProjected(message));
    server?.on('upgrade', (req, socket, head) => void this.upgrade(req, socket, head));
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

  private async upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/ws') return refuse(socket, 404, 'not_found', `no WebSocket at ${url.pathname}; connect to /ws`);
    let since: number | undefined;
    if (url.searchParams.getAll('since').length > 1) return refuse(socket, 400, 'invalid_request', 'since must be given once, as a plain value', { field: 'since' });
    const raw = url.searchParams.get('since');
    if (raw !== null) {
      since = Number(raw);
      if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(since) || since < -1) {
        return refuse(socket, 400, 'invalid_request', 'since must be a ledger seq (an integer >= -1)', { field: 'since' });
      }
      if (since > this.knownHead) {
        try {
          this.knownHead = Math.max(this.knownHead, await this.source.head());
        } catch {
          return refuse(socket, 503, 'unavailable', 'the ledger cannot be read right now; reconnect shortly');
        }
        // Nothing past the head can be replayed, and the socket would wait silently for that seq to come.
        if (since > this.knownHead) {
          return refuse(socket, 400, 'invalid_request', `since ${since} is past the ledger head (${this.knownHead}); send a seq you were given, or -1 for everything`, {
            field: 'since',
          });
        }
      }
    }
    if (!this.unsubscribe) return refuse(socket, 503, 'unavailable', 'the event stream is stopping');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws, since));
  }

  /** Serves one connected socket: live frames, after a replay of what followed `since` when it is given. */
  attach(ws: PushSocket, since?: number): void {
    let leave!: () => void;
    const gone = new Promise<void>((resolve) => (leave = resolve));
    const client: Client = { ws, alive: true, lastSeq: since ?? -1, pending: since === undefined ? undefined : [], pendingBytes: 0, gone, leave };
    this.clients.add(client);
    this.releaseFollow ??= this.options.checkpoint?.follow();
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
    ws.on('close', () => this.forget(client));
    ws.on('error', () => ws.terminate());
    if (since !== undefined) void this.replay(client, since);
  }

  private forget(client: Client): void {
    this.clients.delete(client);
    if (this.clients.size === 0) {
      this.releaseFollow?.();
      this.releaseFollow = undefined;
    }
    client.pending = undefined;
    client.pendingBytes = 0;
    client.leave();
  }

  private drop(client: Client): void {
    client.ws.terminate();
    this.forget(client);
  }

  /** Sends, or drops the client whose backlog is past the bound. */
  private send(client: Client, frame: string): boolean {
    if (client.ws.readyState !== OPEN || !this.clients.has(client)) return false;
    if (client.ws.bufferedAmount + client.pendingBytes > this.bound) {
      this.drop(client);
      return false;
    }
    client.ws.send(frame);
    return true;
  }

  private onProjected(message: Notification): void {
    if (!announces(message, [REPLAYED_READ_MODEL])) return;
    if (message.seq > this.knownHead) this.knownHead = message.seq;
    const list = (message.entries ?? []) as LedgerEntry[];
    if (!this.options.checkpoint) return this.push(list);
    const from = typeof message.from === 'number' ? message.from : list[0]?.seq;
    // Committed before it was announced, so the read model holds it: read the gap and this batch from there.
    if (from !== undefined && from > this.delivered + 1) return void this.pull();
    this.push(list.filter((entry) => entry.seq > this.delivered));
    if (message.seq > this.delivered) this.delivered = message.seq;
  }

  /** The checkpoint moved: without the bus, or when its announcement does not come, read what it announced. */
  private moved(seq: number): void {
    if (seq <= this.delivered) return;
    if (this.clients.size === 0) {
      this.delivered = seq;
      return;
    }
    if (!this.bus.healthy) return void this.pull();
    this.movedTo = Math.max(this.movedTo, seq);
    this.graceTimer ??= setTimeout(() => {
      this.graceTimer = undefined;
      if (this.delivered < this.movedTo) void this.pull();
    }, ANNOUNCEMENT_GRACE_MS);
  }

  /** Pushes what the read model holds past the last seq pushed; one pull at a time, again if asked meanwhile. */
  private async pull(): Promise<void> {
    if (this.pulling) {
      this.pullAgain = true;
      return;
    }
    this.pulling = true;
    try {
      do {
        this.pullAgain = false;
        for (;;) {
          const page = await this.source.entriesAfter(this.delivered, REPLAY_PAGE);
          const fresh = page.filter((entry) => entry.seq > this.delivered);
          this.push(fresh);
          if (fresh.length > 0) this.delivered = fresh[fresh.length - 1]!.seq;
          if (page.length < REPLAY_PAGE || !this.unsubscribe) break;
        }
      } while (this.pullAgain && this.unsubscribe);
    } catch {
      // The database is away: the next move of the checkpoint, or the next announcement, pulls again.
    } finally {
      this.pulling = false;
    }
  }

  private push(list: LedgerEntry[]): void {
    for (const entry of list) {
      if (entry.seq > this.knownHead) this.knownHead = entry.seq;
      if (!PUSHED.has(kindOf(entry.type, entry.data))) continue;
      const frame = frameOf(entry);
      let bytes: number | undefined;
      for (const client of this.clients) {
        if (client.pending) {
          bytes ??= Buffer.byteLength(frame);
          client.pending.push({ seq: entry.seq, frame });
          client.pendingBytes += bytes;
          // Held back frames count against the same bound: a replay that stalls cannot hoard the live stream.
          if (client.pendingBytes + client.ws.bufferedAmount > this.bound) this.drop(client);
        } else if (entry.seq > client.lastSeq) this.send(client, frame);
      }
    }
  }

  private async replay(client: Client, since: number): Promise<void> {
    let after = since;
    let written: Promise<unknown> = Promise.resolve();
    try {
      for (;;) {
        const page = await this.source.entriesAfter(after, REPLAY_PAGE);
        for (const entry of page) {
          if (!this.clients.has(client)) return;
          after = entry.seq;
          if (!PUSHED.has(entry.kind)) continue;
          // Written a little at a time: the client takes the replay at its own pace, within the bound.
          if (client.ws.bufferedAmount >= this.replayHighWater && !(await this.drained(client, written))) return;
          written = new Promise((resolve) => client.ws.send(frameOf(entry), resolve));
        }
        if (page.length < REPLAY_PAGE) break;
      }
      if (!this.clients.has(client)) return;
      const held = client.pending ?? [];
      client.pending = undefined;
      client.pendingBytes = 0;
      for (const { seq, frame } of held) {
        if (seq <= after) continue;
        if (!this.send(client, frame)) return;
        after = seq;
      }
      client.lastSeq = after;
    } catch {
      if (this.clients.has(client)) client.ws.close(1011, 'replay failed; reconnect with since');
    }
  }

  /** Waits until the socket has taken what the replay wrote; false (and the client dropped) when it does not in time. */
  private async drained(client: Client, written: Promise<unknown>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), this.options.replayDrainTimeoutMs ?? REPLAY_DRAIN_TIMEOUT_MS)));
    const outcome = await Promise.race([written.then(() => 'drained' as const), client.gone.then(() => 'gone' as const), late]);
    clearTimeout(timer);
    if (outcome === 'late') this.drop(client);
    return outcome === 'drained' && this.clients.has(client);
  }

  async stop(): Promise<void> {
    clearInterval(this.heartbeat);
    clearTimeout(this.graceTimer);
    this.stopAdvance?.();
    await this.unsubscribe?.();
    this.unsubscribe = undefined;
    const open = [...this.clients];
    for (const client of open) this.forget(client);
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
