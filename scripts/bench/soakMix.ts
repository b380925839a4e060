import { LAMPORTS_PER_SOL } from '@solana/web3.js';

/**
 * The society `bench:soak` offers: what each request of a citizen is, drawn by weight, and what a good answer
 * to it looks like. The daily caps (50 top-level posts, 300 replies, 300 votes per citizen per UTC day) are
 * kept by each client's own count: a draw whose cap is spent is drawn again among the rest, so no request is
 * a deliberate 429 and a long run keeps its offered rate.
 */
export type Operation = 'post' | 'reply' | 'vote' | 'front' | 'search' | 'pulse' | 'buy' | 'sell' | 'transfer';

/** Shares of the offered requests: reads about half, writes of the society a quarter, trades a quarter. */
export const WEIGHTS: Record<Operation, number> = {
  front: 18,
  pulse: 14,
  search: 10,
  post: 4,
  reply: 9,
  vote: 12,
  buy: 13,
  sell: 8,
  transfer: 12,
};
export const OPERATIONS = Object.keys(WEIGHTS) as Operation[];
/** The share of the offered requests that are buys (the caps can move it a little late in a long run). */
export const BUY_SHARE = WEIGHTS.buy / Object.values(WEIGHTS).reduce((a, b) => a + b, 0);

/** A cap a little under the service's, so a count off by one never turns into a 429. */
const CAPS: Partial<Record<Operation, number>> = { post: 48, reply: 295, vote: 295 };

export const BUY_SOL = 0.0005;
/** Each sell moves this share of what the citizen holds, so holdings never run out and no sell closes the account. */
export const SELL_PERCENT = 2;
const SEARCH_TERMS = ['momentum', 'curve', 'soak', 'liquidity', 'holders', 'SOAK'];
const TAGS = ['alpha', 'curve', 'soak'];
/** Recent top-level posts kept as targets of replies and votes. */
const RECENT_POSTS = 256;

import type { Citizen } from './citizens';

export interface Request {
  op: Operation;
  method: 'GET' | 'POST';
  path: string;
  body: string;
  headers: Record<string, string>;
}

export class Society {
  private readonly used: Array<Partial<Record<Operation, number>>>;
  /** Top-level posts with the index of the client who wrote them (a vote on one's own post is 403). */
  private readonly posts: Array<{ id: string; author: number }> = [];
  private lamports = 1_000;
  private writes = 0;

  constructor(
    private readonly citizens: Citizen[],
    private readonly mint: string,
    private readonly sink: Citizen,
    private readonly tag: string,
    private readonly random: () => number,
  ) {
    this.used = citizens.map(() => ({}));
  }

  /** A post some client wrote, to reply to and vote on. */
  remember(id: string, author: number): void {
    this.posts.push({ id, author });
    if (this.posts.length > RECENT_POSTS) this.posts.shift();
  }

  /** Client `client`'s next request: `only`, or an operation drawn by weight among those its caps still allow. */
  next(client: number, only?: Operation): Request {
    const op = only ?? this.draw(client);
    this.used[client]![op] = (this.used[client]![op] ?? 0) + 1;
    const auth = { authorization: `Bearer ${this.citizens[client]!.key}`, 'idempotency-key': `soak-${this.tag}-${++this.writes}` };
    const post = (path: string, body: unknown): Request => ({ op, method: 'POST', path, body: JSON.stringify(body), headers: auth });
    const get = (path: string): Request => ({ op, method: 'GET', path, body: '', headers: {} });
    switch (op) {
      case 'front':
        return get('/api/v1/front');
      case 'pulse':
        return get('/api/v1/pulse');
      case 'search':
        return get(`/api/v1/search?q=${encodeURIComponent(this.pick(SEARCH_TERMS))}`);
      case 'post':
        return post('/api/v1/posts', { body: `soak ${this.pick(SEARCH_TERMS)} call ${this.writes} on the curve`, mint: this.mint, tags: [this.pick(TAGS)] });
      case 'reply':
        return post('/api/v1/posts', { body: `agreed, ${this.pick(SEARCH_TERMS)} holds (${this.writes})`, parent_id: this.target(client, true) });
      case 'vote':
        return post('/api/v1/votes', { post_id: this.target(client, false), value: this.random() < 0.8 ? 1 : -1 });
      case 'buy':
        return post('/api/v1/tokens/buy', { mint: this.mint, amount_sol: BUY_SOL });
      case 'sell':
        return post('/api/v1/tokens/sell', { mint: this.mint, percent: SELL_PERCENT });
      case 'transfer':
        return post('/api/v1/transfer', { to: this.sink.handle, amount: this.lamports++ / LAMPORTS_PER_SOL });
    }
  }

  /** A good 2xx answer, or the label of what is wrong with it. */
  judge(request: Request, client: number, body: string): string | undefined {
    const reply = JSON.parse(body) as { ok?: boolean; executed?: boolean; signature?: string; post?: { id?: string } };
    if (reply.ok !== true) return 'ok is not true';
    if (request.op === 'buy' || request.op === 'sell' || request.op === 'transfer') {
      if (!reply.executed || !reply.signature) return 'not executed';
    }
    if (request.op === 'post') {
      if (!reply.post?.id) return 'no post id';
      this.remember(reply.post.id, client);
    }
    return undefined;
  }

  private draw(client: number): Operation {
    const open = OPERATIONS.filter((op) => {
      const cap = CAPS[op];
      if (cap !== undefined && (this.used[client]![op] ?? 0) >= cap) return false;
      // A vote needs someone else's post; a reply any post.
      if (op === 'vote') return this.posts.some((p) => p.author !== client);
      if (op === 'reply') return this.posts.length > 0;
      return true;
    });
    const total = open.reduce((sum, op) => sum + WEIGHTS[op], 0);
    let roll = this.random() * total;
    for (const op of open) {
      roll -= WEIGHTS[op];
      if (roll < 0) return op;
    }
    return open[open.length - 1]!;
  }

  private target(client: number, anyAuthor: boolean): string {
    const candidates = anyAuthor ? this.posts : this.posts.filter((p) => p.author !== client);
    return candidates[Math.floor(this.random() * candidates.length)]!.id;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }
}
