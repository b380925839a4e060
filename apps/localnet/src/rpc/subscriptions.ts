import type { Server as HttpServer } from 'node:http';
import { PublicKey, SystemProgram } from '@solana/web3.js';
import { WebSocket, WebSocketServer } from 'ws';
import type { LocalChain, TransactionRecord } from '../chain/localChain';
import { SLOT_MS } from '../chain/localChain';
import { encodeAccount, EncodeOptions, encodingOf, parsePubkey } from './encoding';
import { RpcError } from './errors';
import { rpcJson } from './json';
import { checkFilters, matchesFilters } from './methods';

const MAX_BUFFERED_BYTES = 8 << 20;
/** Bounds what one socket can make the server remember. */
const MAX_SUBSCRIPTIONS_PER_SOCKET = 1_000;

type Subscription =
  | { kind: 'signature'; socket: WebSocket; signature: string }
  | { kind: 'account'; socket: WebSocket; key: string; options: EncodeOptions }
  | { kind: 'program'; socket: WebSocket; programId: string; options: EncodeOptions; filters: unknown }
  | { kind: 'logs'; socket: WebSocket; mentions: string | null }
  | { kind: 'slot' | 'root' | 'slotsUpdates'; socket: WebSocket };

/**
 * The PubSub WebSocket (RPC port + 1), speaking the JSON-RPC that web3.js's rpc-websockets client sends:
 * signature (which confirmTransaction waits on), account, program, logs, slot, root and slotsUpdates subscriptions.
 */
export class SubscriptionServer {
  private readonly wss: WebSocketServer;
  private readonly subscriptions = new Map<number, Subscription>();
  private readonly bySocket = new WeakMap<WebSocket, Set<number>>();
  private readonly bySignature = new Map<string, Set<number>>();
  private readonly byAccount = new Map<string, Set<number>>();
  private readonly slotSubscribers = new Set<number>();
  private readonly programSubscribers = new Map<string, Set<number>>();
  private readonly logsSubscribers = new Set<number>();
  private nextId = 0;
  private slotTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly chain: LocalChain,
    server: HttpServer,
  ) {
    this.wss = new WebSocketServer({ server, maxPayload: 64 * 1024 });
    this.wss.on('connection', (socket) => this.connected(socket));
    chain.on('transaction', (record: TransactionRecord) => {
      this.logged(record);
      this.landed(record);
    });
    chain.on('account', (key: PublicKey) => this.accountChanged(key));
    chain.on('slot', (slot: { slot: number; parent: number; root: number }) => this.slotChanged(slot));
  }

  private connected(socket: WebSocket): void {
    const owned = new Set<number>();
    this.bySocket.set(socket, owned);
    socket.on('message', (raw) => {
      let request: { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
      try {
        request = JSON.parse(raw.toString());
      } catch {
        return this.send(socket, { jsonrpc: '2.0', error: RpcError.parse().toJSON(), id: null });
      }
      if (!request || typeof request !== 'object' || request.id === undefined) return; // notifications, e.g. web3.js's ping
      const id = typeof request.id === 'number' || typeof request.id === 'string' ? request.id : null;
      try {
        const params = Array.isArray(request.params) ? request.params : [];
        const result = this.handle(socket, owned, String(request.method), params);
        this.send(socket, { jsonrpc: '2.0', result, id });
      } catch (error) {
        const rpcError = error instanceof RpcError ? error : new RpcError(-32603, 'Internal error');
        this.send(socket, { jsonrpc: '2.0', error: rpcError.toJSON(), id });
      }
    });
    socket.on('close', () => {
      for (const id of [...owned]) this.remove(id);
    });
    socket.on('error', () => socket.terminate());
  }

  private handle(socket: WebSocket, owned: Set<number>, method: string, params: unknown[]): unknown {
    switch (method) {
      case 'signatureSubscribe': {
        if (typeof params[0] !== 'string') throw RpcError.invalidParams('Invalid param: Invalid');
        const signature = params[0];
        const landed = this.chain.record(signature);
        // One for a signature that already landed fires right after this answer and ends: it never counts
        // against the socket's cap, however many arrive in one read before the first has fired.
        const id = this.add(landed ? new Set<number>() : owned, { kind: 'signature', socket, signature });
        index(this.bySignature, signature, id);
        const options = (params[1] && typeof params[1] === 'object' ? params[1] : {}) as { enableReceivedNotification?: boolean };
        setImmediate(() => {
          if (options.enableReceivedNotification && this.subscriptions.has(id)) {
            this.notify(socket, 'signatureNotification', id, { context: { slot: this.chain.slot }, value: 'receivedSignature' });
          }
          if (landed) this.landed(landed);
        });
        return id;
      }
      case 'logsSubscribe': {
        const filter = params[0];
        let mentions: string | null = null;
        if (filter && typeof filter === 'object' && Array.isArray((filter as { mentions?: unknown }).mentions)) {
          const list = (filter as { mentions: unknown[] }).mentions;
          if (list.length !== 1) throw RpcError.invalidParams('Invalid Request: Only 1 address supported');
          mentions = parsePubkey(list[0]).toBase58();
        } else if (filter !== 'all' && filter !== 'allWithVotes') {
          throw RpcError.invalidParams('Invalid params: expected "all", "allWithVotes" or { mentions: [address] }');
        }
        const id = this.add(owned, { kind: 'logs', socket, mentions });
        this.logsSubscribers.add(id);
        return id;
      }
      case 'programSubscribe': {
        const programId = parsePubkey(params[0]).toBase58();
        const options = (params[1] && typeof params[1] === 'object' ? params[1] : {}) as EncodeOptions & { filters?: unknown };
        encodingOf(options, 'base58');
        checkFilters(options.filters);
        const id = this.add(owned, { kind: 'program', socket, programId, options: { encoding: options.encoding ?? 'base58' }, filters: options.filters });
        index(this.programSubscribers, programId, id);
        return id;
      }
      case 'rootSubscribe':
      case 'slotsUpdatesSubscribe': {
        const id = this.add(owned, { kind: method === 'rootSubscribe' ? 'root' : 'slotsUpdates', socket });
        this.slotSubscribers.add(id);
        this.startSlotClock();
        return id;
      }
      case 'accountSubscribe': {
        const key = parsePubkey(params[0]).toBase58();
        const options = (params[1] && typeof params[1] === 'object' ? params[1] : {}) as EncodeOptions;
        encodingOf(options, 'base58');
        const id = this.add(owned, { kind: 'account', socket, key, options: { encoding: options.encoding ?? 'base58' } });
        index(this.byAccount, key, id);
        return id;
      }
      case 'slotSubscribe': {
        const id = this.add(owned, { kind: 'slot', socket });
        this.slotSubscribers.add(id);
        this.startSlotClock();
        return id;
      }
      case 'signatureUnsubscribe':
      case 'accountUnsubscribe':
      case 'logsUnsubscribe':
      case 'programUnsubscribe':
      case 'rootUnsubscribe':
      case 'slotsUpdatesUnsubscribe':
      case 'slotUnsubscribe': {
        const id = params[0];
        if (typeof id !== 'number' || !owned.has(id)) throw RpcError.invalidParams('Invalid subscription id.');
        this.remove(id);
        return true;
      }
      default:
        throw RpcError.methodNotFound();
    }
  }

  private add(owned: Set<number>, subscription: Subscription): number {
    if (owned.size >= MAX_SUBSCRIPTIONS_PER_SOCKET) throw new RpcError(-32602, `Invalid params: at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions per connection`);
    const id = this.nextId++;
    this.subscriptions.set(id, subscription);
    owned.add(id);
    return id;
  }

  private remove(id: number): void {
    const subscription = this.subscriptions.get(id);
    if (!subscription) return;
    this.subscriptions.delete(id);
    // A signature subscription ends itself when it fires; it must stop counting against its socket too.
    this.bySocket.get(subscription.socket)?.delete(id);
    if (subscription.kind === 'signature') unindex(this.bySignature, subscription.signature, id);
    if (subscription.kind === 'account') unindex(this.byAccount, subscription.key, id);
    if (subscription.kind === 'program') unindex(this.programSubscribers, subscription.programId, id);
    if (subscription.kind === 'logs') this.logsSubscribers.delete(id);
    if (subscription.kind === 'slot' || subscription.kind === 'root' || subscription.kind === 'slotsUpdates') {
      this.slotSubscribers.delete(id);
      if (this.slotSubscribers.size === 0 && this.slotTimer) {
        clearInterval(this.slotTimer);
        this.slotTimer = null;
      }
    }
  }

  private logged(record: TransactionRecord): void {
    for (const id of this.logsSubscribers) {
      const subscription = this.subscriptions.get(id);
      if (subscription?.kind !== 'logs' || (subscription.mentions && !record.accountKeys.includes(subscription.mentions))) continue;
      this.notify(subscription.socket, 'logsNotification', id, {
        context: { slot: record.slot },
        value: { signature: record.signature, err: record.meta.err, logs: record.meta.logMessages },
      });
    }
  }

  private landed(record: TransactionRecord): void {
    const ids = this.bySignature.get(record.signature);
    if (!ids) return;
    for (const id of [...ids]) {
      const subscription = this.subscriptions.get(id);
      this.remove(id); // a signature subscription ends with its one notification, as on mainnet
      if (!subscription) continue;
      this.notify(subscription.socket, 'signatureNotification', id, { context: { slot: record.slot }, value: { err: record.meta.err } });
    }
  }

  private accountChanged(key: PublicKey): void {
    const ids = this.byAccount.get(key.toBase58());
    if (!ids && this.programSubscribers.size === 0) return;
    const account = this.chain.account(key);
    const closed = { lamports: 0n, data: Buffer.alloc(0), owner: SystemProgram.programId, executable: false };
    for (const id of ids ?? []) {
      const subscription = this.subscriptions.get(id);
      if (subscription?.kind !== 'account') continue;
      const value = encodeAccount(this.chain, account ?? closed, subscription.options);
      this.notify(subscription.socket, 'accountNotification', id, { context: { slot: this.chain.slot }, value });
    }
    if (!account) return;
    for (const id of this.programSubscribers.get(account.owner.toBase58()) ?? []) {
      const subscription = this.subscriptions.get(id);
      if (subscription?.kind !== 'program' || !matchesFilters(account.data, subscription.filters)) continue;
      const value = { pubkey: key.toBase58(), account: encodeAccount(this.chain, account, subscription.options) };
      this.notify(subscription.socket, 'programNotification', id, { context: { slot: this.chain.slot }, value });
    }
  }

  private slotChanged(slot: { slot: number; parent: number; root: number }): void {
    for (const id of this.slotSubscribers) {
      const subscription = this.subscriptions.get(id);
      if (subscription?.kind === 'slot') this.notify(subscription.socket, 'slotNotification', id, slot);
      if (subscription?.kind === 'root') this.notify(subscription.socket, 'rootNotification', id, slot.root);
      if (subscription?.kind === 'slotsUpdates') {
        this.notify(subscription.socket, 'slotsUpdatesNotification', id, { type: 'root', slot: slot.root, timestamp: Date.now() });
      }
    }
  }

  /** Slots advance lazily on requests; a slot subscriber needs them to advance on their own. */
  private startSlotClock(): void {
    if (this.slotTimer) return;
    this.slotTimer = setInterval(() => this.chain.tick(), SLOT_MS);
    this.slotTimer.unref();
  }

  private notify(socket: WebSocket, method: string, subscription: number, result: unknown): void {
    this.send(socket, { jsonrpc: '2.0', method, params: { result, subscription } });
  }

  private send(socket: WebSocket, message: unknown): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    // A client that does not read its notifications is cut off rather than buffered without bound.
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) return void socket.terminate();
    socket.send(rpcJson(message));
  }

  close(): Promise<void> {
    if (this.slotTimer) clearInterval(this.slotTimer);
    for (const client of this.wss.clients) client.terminate();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }
}

function index(map: Map<string, Set<number>>, key: string, id: number): void {
  let ids = map.get(key);
  if (!ids) map.set(key, (ids = new Set()));
  ids.add(id);
}

function unindex(map: Map<string, Set<number>>, key: string, id: number): void {
  const ids = map.get(key);
  if (!ids) return;
  ids.delete(id);
  if (ids.size === 0) map.delete(key);
}
