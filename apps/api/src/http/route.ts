import type { Request, Response } from 'express';
import type { JsonSchema, LiteralSchema, RequestOf } from '@svc/contracts';
import type { ProjectionName } from '@svc/projections';
import type { Services } from '../services';

export type Auth = 'public' | 'auth' | 'optional';

/** An `auth` route runs only for a citizen who authenticated; an `optional` one also for a caller without a key. */
type Authenticated<A extends Auth> = A extends 'auth' ? string : string | undefined;

export interface RouteInput<B = any, Q = any, P = any, A extends Auth = Auth> {
  body: B;
  query: Q;
  params: P;
  /** The authenticated citizen's agent id (auth routes; optional routes when a key was sent). */
  agentId: Authenticated<A>;
  /** The key that authenticated agentId: memory notes are sealed under it and rotation replaces it. */
  apiKey: Authenticated<A>;
  /** The caller's If-None-Match, for routes that answer 304. */
  ifNoneMatch: string | undefined;
  /** Runs another route of the table through the same pipeline (the MCP tools call the routes through it). */
  pipeline: import('./pipeline').Pipeline;
  /**
   * The POST's Idempotency-Key, held by this request alone (scoped to agentId, or to public callers): an
   * on-chain command finds its own outbox row by it after a retry took over from a process that died.
   */
  idempotencyKey?: string;
  /**
   * A new id (`prefix` + ULID) for what the request creates. Under an Idempotency-Key it is the same on every
   * attempt, so a retry after a crash proposes what it may already have written.
   */
  newId(prefix: string): string;
  /**
   * Set when this attempt took the Idempotency-Key over from one whose process died: the request may already
   * have taken effect, at or after this time (ms).
   */
  resumedFrom?: number;
  req: Request;
  res: Response;
}

/** A reply; `ok: true` is added to the body. `notModified` sends a bare 304. */
export type RouteResult =
  | { status?: number; body: Record<string, unknown>; headers?: Record<string, string> }
  | { notModified: true; headers?: Record<string, string> }
  | { raw: string | Buffer; contentType: string; headers?: Record<string, string> }
  /** The handler wrote the response itself (the MCP transport does). */
  | { sent: true };

/** One row of the spec's endpoint tables: how it is reached, what it accepts, what it does. */
export interface RouteSpec {
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI-style path, e.g. `/api/v1/agents/{handle}`. */
  path: string;
  auth: Auth;
  summary: string;
  description?: string;
  tag: string;
  body?: JsonSchema;
  query?: JsonSchema;
  params?: JsonSchema;
  /**
   * The body a handler checks itself, documented but not validated on the way in: /mcp hands its JSON-RPC to the
   * MCP transport, which answers a malformed message with a JSON-RPC error, and each tool call is validated as its endpoint.
   */
  ownBody?: JsonSchema;
  response?: JsonSchema;
  /**
   * The media types a raw reply (`{raw, contentType}`) may have, for the OpenAPI document; `response` then describes
   * its body. A route that answers JSON through `body` leaves it out.
   */
  produces?: string[];
  /** The success status when it is not 200: 201 for a route that creates something, 101 for the WebSocket handshake. */
  status?: 101 | 201;
  /** Codes this route may answer with, beyond the ones every route can. */
  errors?: string[];
  /**
   * How a refusal reads: the envelope `{ok: false, error}` unless the route speaks JSON-RPC (the MCP endpoints), whose
   * refusals are JSON-RPC errors carrying the envelope's `error` as their `data`.
   */
  refusals?: 'json-rpc';
  /**
   * Replies of the protocol the route speaks at statuses the envelope's codes do not cover (the bodiless 202 the MCP
   * transport answers a notification with), for the OpenAPI document.
   */
  protocolReplies?: Record<number, { description: string; schema?: JsonSchema }>;
  /**
   * A POST takes an Idempotency-Key unless this is false: /mcp applies the key to the tool call it carries,
   * not to the JSON-RPC exchange around it.
   */
  idempotent?: false;
  /**
   * Fields of the reply that are secrets shown once (`wallet.secret_key` names a nested one): a retry under the
   * Idempotency-Key gets them again only within SECRET_REPLAY_MS, and null after, with `secrets_already_shown`.
   */
  secrets?: string[];
  /** Answers 304 to an If-None-Match that still matches its ETag. */
  conditional?: boolean;
  /**
   * The read models the route reads: it waits until they reach the ledger head before answering
   * (read-your-writes), and for none of the others.
   */
  consistentRead?: readonly ProjectionName[];
  handle(input: RouteInput, services: Services): Promise<RouteResult>;
}

/** What a route is given of a request part its schema describes; `unknown` where it has no schema. */
type Validated<S> = S extends LiteralSchema ? RequestOf<S> : unknown;

/** A route as written: its handler's input is typed by its schemas and its `auth`. */
export interface RouteDefinition<A extends Auth, BS, QS, PS> extends Omit<RouteSpec, 'auth' | 'body' | 'query' | 'params' | 'handle'> {
  auth: A;
  body?: BS;
  query?: QS;
  params?: PS;
  handle(input: RouteInput<Validated<BS>, Validated<QS>, Validated<PS>, A>, services: Services): Promise<RouteResult>;
}

export function defineRoute<
  A extends Auth,
  const BS extends LiteralSchema | undefined = undefined,
  const QS extends LiteralSchema | undefined = undefined,
  const PS extends LiteralSchema | undefined = undefined,
>(definition: RouteDefinition<A, BS, QS, PS>): RouteSpec {
  return definition;
}

/** A newest-first page's `next_before`: when the page is full, the seq of its last item, below which the next one starts. */
export function nextBefore(page: ReadonlyArray<{ seq: number }>, limit: number): number | null {
  return page.length === limit ? page[page.length - 1]!.seq : null;
}

export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * The reply a retry gets once its secrets were shown long enough: the same ids, each secret null, and a note
 * that says why. A secret that was null already (a self-custody wallet's) stays so.
 */
export function withoutSecrets(body: Record<string, unknown>, secrets: string[], shownAt: number): Record<string, unknown> {
  const copy = structuredClone(body);
  for (const path of secrets) {
    const names = path.split('.');
    let holder: Record<string, unknown> | undefined = copy;
    for (const name of names.slice(0, -1)) {
      const next: unknown = holder?.[name];
      holder = next !== null && typeof next === 'object' ? (next as Record<string, unknown>) : undefined;
    }
    const last = names.at(-1)!;
    if (holder && holder[last] !== undefined) holder[last] = null;
  }
  copy.secrets_already_shown = `${secrets.join(' and ')} were shown in the first reply (${new Date(shownAt).toISOString()}) and are not kept: they cannot be shown again`;
  return copy;
}

/** A POST takes an Idempotency-Key unless the route says otherwise. */
export function takesIdempotencyKey(route: RouteSpec): boolean {
  return route.method === 'post' && route.idempotent !== false;
}
