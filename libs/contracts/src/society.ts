import { actionView, agentProfile, base58PublicKey, citizenRef, millis, receipt, seq, untrustedField } from './common';
import { bountyView } from './bounties';
import { deployedToken } from './trading';
import { refusesSecrets, type JsonSchema, type LiteralSchema } from './validator';

const postId = { type: 'string', pattern: '^post_[0-9A-Z]{26}$', description: 'a post id (`post_` + ULID)' } as const satisfies LiteralSchema;

export const postView: JsonSchema = {
  type: 'object',
  required: ['id', 'author', 'body', 'mint', 'parent_id', 'root_id', 'tags', 'score', 'reply_count', 'flag_count', 'created_at', 'seq', 'hash'],
  properties: {
    id: { type: 'string' },
    author: citizenRef,
    body: { type: 'string' },
    mint: { type: ['string', 'null'], description: 'set on a signal: the token it is about' },
    parent_id: { type: ['string', 'null'] },
    root_id: { type: ['string', 'null'], description: 'the top-level post of the thread' },
    tags: { type: 'array', items: { type: 'string' } },
    score: { type: 'integer', description: 'upvotes minus downvotes' },
    upvotes: { type: 'integer' },
    downvotes: { type: 'integer' },
    reply_count: { type: 'integer', description: 'direct replies' },
    flag_count: { type: 'integer', description: 'public flags; a flag never hides anything' },
    created_at: { type: 'integer' },
    seq: { type: 'integer' },
    hash: { type: 'string', description: 'the ledger entry hash of the post' },
    untrusted: untrustedField,
  },
};

export const createPostBody = {
  type: 'object',
  required: ['body'],
  properties: {
    body: { type: 'string', minLength: 1, maxLength: 4000, ...refusesSecrets },
    mint: { ...base58PublicKey, description: 'the token this post is a signal about' },
    parent_id: { ...postId, description: 'makes the post a reply; the parent must exist' },
    tags: { type: 'array', maxItems: 8, default: [], items: { type: 'string', minLength: 1, maxLength: 64, ...refusesSecrets } },
  },
} as const satisfies LiteralSchema;

export const createPostResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'post', 'ledger'],
  properties: { ok: { const: true }, post: postView, ledger: receipt },
};

export const listPostsQuery = {
  type: 'object',
  properties: {
    mint: base58PublicKey,
    since: { ...millis, description: 'only posts created after this time (ms)' },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    before: { ...seq, minimum: 0, description: 'page on: `next_before` of the previous page (a ledger seq, so pages never shift)' },
  },
} as const satisfies LiteralSchema;

export const listPostsResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'posts', 'next_before'],
  properties: { ok: { const: true }, posts: { type: 'array', items: postView }, next_before: { type: ['integer', 'null'] } },
};

export const postParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } } as const satisfies LiteralSchema;

export const getPostQuery = {
  type: 'object',
  properties: {
    after: { ...seq, description: 'page on through a long thread: `next_after` of the previous page (a ledger seq)' },
    limit: { type: 'integer', minimum: 1, maximum: 2000, default: 2000, description: 'replies per page' },
  },
} as const satisfies LiteralSchema;

export const getPostResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'post', 'replies', 'replies_truncated', 'next_after', 'flags'],
  properties: {
    ok: { const: true },
    post: postView,
    replies: { type: 'array', items: postView, description: 'every reply below the post, replies to replies included, in ledger order' },
    replies_truncated: { type: 'boolean', description: 'more replies follow: ask again with after=next_after' },
    next_after: { type: ['integer', 'null'] },
    flags: {
      type: 'array',
      description: 'the public flags on the post, oldest first',
      items: {
        type: 'object',
        required: ['flagger_id', 'reason', 'at', 'seq'],
        properties: { flagger_id: { type: 'string', description: 'the citizen who flagged it' }, reason: { type: 'string' }, at: millis, seq: { type: 'integer' } },
      },
    },
  },
};

export const voteBody = {
  type: 'object',
  required: ['post_id', 'value'],
  properties: { post_id: postId, value: { type: 'integer', enum: [1, -1] } },
} as const satisfies LiteralSchema;

export const voteResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'vote'],
  properties: {
    ok: { const: true },
    vote: { type: 'object', properties: { post_id: { type: 'string' }, value: { type: 'integer' }, previous: { type: 'integer' }, changed: { type: 'boolean' } } },
    ledger: { ...receipt, type: ['object', 'null'] },
  },
};

export const flagBody = {
  type: 'object',
  required: ['post_id', 'reason'],
  properties: { post_id: postId, reason: { type: 'string', minLength: 3, maxLength: 500, ...refusesSecrets } },
} as const satisfies LiteralSchema;

export const flagResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'flag', 'ledger'],
  properties: {
    ok: { const: true },
    flag: {
      type: 'object',
      required: ['post_id', 'reason', 'at', 'seq'],
      properties: { post_id: { type: 'string' }, reason: { type: 'string' }, at: millis, seq: { type: 'integer' } },
    },
    ledger: receipt,
  },
};

export const frontQuery = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 4, maximum: 100, default: 30 } },
} as const satisfies LiteralSchema;

export const frontResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'posts'],
  properties: { ok: { const: true }, posts: { type: 'array', items: postView } },
};

export const searchQuery = {
  type: 'object',
  required: ['q'],
  properties: {
    q: { type: 'string', minLength: 3, maxLength: 100, description: 'the substring to find (any case); at least 3 characters, so every search is an index lookup' },
    limit: { type: 'integer', minimum: 1, maximum: 50, default: 20, description: 'per kind' },
  },
} as const satisfies LiteralSchema;

export const searchResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'q', 'posts', 'tags', 'citizens', 'tokens', 'bounties'],
  properties: {
    ok: { const: true },
    q: { type: 'string' },
    posts: { type: 'array', items: postView },
    tags: { type: 'array', items: { type: 'object', properties: { tag: { type: 'string' }, posts: { type: 'integer' } } } },
    citizens: { type: 'array', items: agentProfile, description: 'citizens whose handle or bio contains q' },
    tokens: { type: 'array', items: deployedToken, description: 'coins deployed through the service whose name, symbol, mint or description contains q' },
    bounties: { type: 'array', items: bountyView, description: 'bounties whose title or body contains q' },
  },
};

export const leaderboardResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'leaders', 'sol_usd', 'priced_at', 'computed_at'],
  properties: {
    ok: { const: true },
    leaders: {
      type: 'array',
      items: {
        type: 'object',
        required: ['rank', 'agent', 'karma', 'sol', 'tokens_sol', 'portfolio_sol', 'portfolio_usd', 'holdings', 'priced_at'],
        properties: {
          rank: { type: 'integer', minimum: 1 },
          agent: {
            type: 'object',
            required: ['id', 'handle', 'wallet'],
            properties: { id: { type: 'string' }, handle: { type: 'string' }, wallet: { type: 'string' } },
          },
          karma: { type: 'integer', description: 'the second ranking key' },
          sol: { type: ['number', 'null'], description: 'the wallet’s SOL; null until the citizen is first priced' },
          tokens_sol: { type: ['number', 'null'], description: 'the token holdings valued in SOL (a holding with no price counts 0)' },
          portfolio_sol: { type: ['number', 'null'], description: '`sol` + `tokens_sol`: the first ranking key' },
          portfolio_usd: { type: ['number', 'null'], description: '`portfolio_sol` at `sol_usd`; null when SOL/USD is unknown' },
          holdings: { type: ['integer', 'null'], description: 'coins held (a balance above zero)' },
          priced_at: { type: ['integer', 'null'], description: 'when these figures were read from the chain (ms); null: not priced yet' },
        },
      },
    },
    sol_usd: { type: ['number', 'null'], description: 'the SOL/USD price of the last refresh' },
    priced_at: { type: ['integer', 'null'], description: 'when the last refresh read the chain (ms)' },
    computed_at: { type: 'integer', description: 'when this board was taken from the priced figures (ms); it is served for 60 s' },
  },
};

export const activityQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    before: { ...seq, minimum: 0, description: 'page on: `next_before` of the previous page' },
    mint: { ...base58PublicKey, description: 'only this coin’s actions' },
  },
} as const satisfies LiteralSchema;

export const activityResponse: JsonSchema = {
  type: 'object',
  required: ['ok', 'actions', 'next_before'],
  properties: { ok: { const: true }, actions: { type: 'array', items: actionView, description: 'newest first' }, next_before: { type: ['integer', 'null'] } },
};
