import type { Request, Response } from 'express';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import Redis from 'ioredis';
import { bodyValidator, queryValidator, type Invalid, type Validator } from '@svc/contracts';
import { idempotentIds, isIdempotencyKey } from '@svc/vault';
import type { ProjectionName } from '@svc/projections';
import { newUlid } from '@svc/readmodel';
import type { Services } from '../services';
import { ApiError, databaseUnavailable, isDatabaseUnavailable, refusalOf, unauthorized } from './errors';
import { takesIdempotencyKey, withoutSecrets, type RouteResult, type RouteSpec } from './route';

export const IDEMPOTENCY_KEY = 'Idempotency-Key';

/**
 * One call of one route, whichever transport carried it: an HTTP request, or an MCP tool call. Everything a
 * route's pipeline needs is here, so that both go through the same steps in the same order.
 */
export interface Call {
  route: RouteSpec;
  /** The key the caller presented, if any (undefined on the MCP read profile, which ignores credentials). */
  apiKey: string | undefined;
  ip: string;
  /** The body as sent (only looked at when the route takes one). */
  body: unknown;
  query: Record<string, unknown>;
  params: Record<string, unknown>;
  /** The concrete path, part of an Idempotency-Key's fingerprint. */
  path: string;
  idempotencyKey: string | undefined;
  /** Where the caller put the Idempotency-Key: the header, or a tool argument. */
  idempotencyField: string;
  ifNoneMatch: string | undefined;
  /** The enclosing HTTP request was already counted against the rate limit (an MCP request). */
  counted?: boolean;
  /** Who apiKey authenticated as, when the enclosing request already asked the vault (an MCP request). */
  authenticated?: { agentId: string | undefined };
  req: Request;
  res: Response;
}

/** What the transport sends back. A refusal is thrown as an ApiError or a Rejected instead. */
export type Outcome =
  | { kind: 'json'; status: number; body: Record<string, unknown>; headers: Record<string, string>; replayed: boolean }
  | { kind: 'notModified'; headers: Record<string, string> }
  | { kind: 'raw'; raw: string | Buffer; contentType: string; headers: Record<string, string> }
  /** The handler wrote the response itself. */
  | { kind: 'sent' };

interface Limiters {
  requests: RateLimiterAbstract;
  registrations: RateLimiterAbstract;
  /** Resolves once the shared store answers (or after a bound); until then counts are per process. */
  ready: Promise<void>;
  close(): void;
}

/** How long a registration waits for Redis to count it; it answers in well under a millisecond when well. */
export const REDIS_COUNT_TIMEOUT_MS = 500;

function createLimiters(services: Services): Limiters {
  const { config } = services;
  const rps = config.requestsPerSecond;
  const perHour = config.registerPerIpPerHour;
  // The request rate is counted per process: a Redis round trip on every request would cost more
  // than the limit protects. Registrations are counted in Redis when there is one, so that two API
  // processes still hold one address to one limit.
  const requests = new RateLimiterMemory({ points: rps * 10, duration: 10 });
  if (config.redisUrl) {
    // A Redis that holds the connection open but does not answer (stopped, swapping, a link dropped without
    // a reset) would hold every registration forever: past the timeout the in-memory insurance counts instead.
    const client = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: REDIS_COUNT_TIMEOUT_MS });
    client.on('error', () => undefined);
    return {
      requests,
      registrations: new RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${config.redisPrefix}:rl:reg`,
        points: perHour,
        duration: 3600,
        insuranceLimiter: new RateLimiterMemory({ points: perHour, duration: 3600 }),
      }),
      ready: new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000);
        client.once('ready', () => {
          clearTimeout(timer);
          resolve();
        });
      }),
      close: () => client.disconnect(),
    };
  }
  return {
    requests,
    registrations: new RateLimiterMemory({ points: perHour, duration: 3600 }),
    ready: Promise.resolve(),
    close: () => undefined,
  };
}

async function consume(limiter: RateLimiterAbstract, key: string, what: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (error) {
    if (error instanceof RateLimiterRes) {
      const seconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
      throw new ApiError(429, 'rate_limited', `${what}; retry in ${seconds} s`, {}, { 'Retry-After': String(seconds) });
    }
    throw error;
  }
}

interface Validators {
  body?: Validator;
  query?: Validator;
  params?: Validator;
}

/** A request its schemas refuse, before anything (the Idempotency-Key included) stores any of it. */
function invalidRequest({ code, message, field, kind }: Invalid): ApiError {
  return new ApiError(400, code ?? 'invalid_request', message, kind === undefined ? { field } : { field, kind });
}

export function envelope(error: ApiError): Record<string, unknown> {
  return { ok: false, error: { code: error.code, message: error.message, ...error.details } };
}

/** Authentication, rate limits, validation, idempotency and read-your-writes around every route, in that order. */
export class Pipeline {
  private readonly limiters: Limiters;
  private readonly validators = new Map<RouteSpec, Validators>();

  constructor(private readonly services: Services) {
    this.limiters = createLimiters(services);
  }

  get ready(): Promise<void> {
    return this.limiters.ready;
  }

  close(): void {
    this.limiters.close();
  }

  /** Counts a request without a key against its address (keyed requests are counted once they authenticate). */
  countAnonymous(ip: string): Promise<void> {
    return consume(this.limiters.requests, `ip:${ip}`, 'too many requests');
  }

  private validatorsOf(route: RouteSpec): Validators {
    let compiled = this.validators.get(route);
    if (!compiled) {
      compiled = {
        body: route.body ? bodyValidator(route.body) : undefined,
        query: route.query ? queryValidator(route.query) : undefined,
        params: route.params ? queryValidator(route.params) : undefined,
      };
      this.validators.set(route, compiled);
    }
    return compiled;
  }

  async invoke(call: Call): Promise<Outcome> {
    try {
      return await this.run(call);
    } catch (error) {
      // A database that does not answer is not a fault of this request: 503 with Retry-After, never 500.
      if (!refusalOf(error) && isDatabaseUnavailable(error)) throw databaseUnavailable();
      throw error;
    }
  }

  private async run(call: Call): Promise<Outcome> {
    const { route, services } = { route: call.route, services: this.services };
    if (route.path === '/api/v1/register') {
      await consume(this.limiters.registrations, `ip:${call.ip}`, 'too many registrations from this address');
    }
    // Who is calling comes first: a missing or unknown key is 401 whatever the body holds.
    const key = call.apiKey;
    let agentId: string | undefined;
    if (route.auth !== 'public' && key) agentId = call.authenticated ? call.authenticated.agentId : await authenticate(services, key);
    if (route.auth === 'auth' && !agentId) throw unauthorized();
    // With a key, counted per citizen once it authenticates, so a made-up key buys no fresh allowance.
    if (key && !call.counted) await consume(this.limiters.requests, agentId ? `agent:${agentId}` : `ip:${call.ip}`, 'too many requests');

    const validators = this.validatorsOf(route);
    const body = validators.body ? (call.body ?? {}) : undefined;
    if (validators.body) {
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw new ApiError(400, 'invalid_request', 'the body must be a JSON object', { field: '' });
      }
      const invalid = validators.body(body);
      if (invalid) throw invalidRequest(invalid);
    }
    const query: Record<string, unknown> = { ...call.query };
    for (const [name, value] of Object.entries(query)) {
      if (Array.isArray(value) || (value !== null && typeof value === 'object')) {
        throw new ApiError(400, 'invalid_request', `${name} must be given once, as a plain value`, { field: name });
      }
    }
    if (validators.query) {
      const invalid = validators.query(query);
      if (invalid) throw invalidRequest(invalid);
    }
    const params: Record<string, unknown> = { ...call.params };
    if (validators.params) {
      const invalid = validators.params(params);
      if (invalid) throw invalidRequest(invalid);
    }
    const idempotencyKey = takesIdempotencyKey(route) ? call.idempotencyKey : undefined;
    if (idempotencyKey !== undefined && !isIdempotencyKey(idempotencyKey)) {
      throw new ApiError(400, 'invalid_request', `the ${call.idempotencyField} ${call.idempotencyField === IDEMPOTENCY_KEY ? 'header' : 'argument'} must be 1-255 visible ASCII characters`, { field: call.idempotencyField });
    }
    // A public POST (register) is scoped by address too: its replay carries the first caller's secrets.
    const scope = agentId ?? `public:${call.ip}`;
    const held = idempotencyKey === undefined ? undefined : await holdIdempotencyKey(services, call, scope, idempotencyKey);
    if (held && 'replay' in held) return held.replay;
    if (route.consistentRead) await readYourWrites(services, route.consistentRead);
    let result: RouteResult;
    try {
      const newId = held?.newId ?? ((prefix: string) => `${prefix}${newUlid()}`);
      result = await route.handle(
        {
          body,
          query,
          params,
          agentId,
          apiKey: agentId ? key : undefined,
          ifNoneMatch: call.ifNoneMatch,
          idempotencyKey,
          newId,
          resumedFrom: held?.resumedFrom,
          pipeline: this,
          req: call.req,
          res: call.res,
        },
        services,
      );
    } catch (error) {
      await held?.failed(error);
      throw error;
    }
    // Only a JSON reply can be kept (no POST answers otherwise): anything else frees the key.
    if ('sent' in result || call.res.headersSent) {
      await held?.abandon();
      return { kind: 'sent' };
    }
    if ('notModified' in result) {
      await held?.abandon();
      return { kind: 'notModified', headers: result.headers ?? {} };
    }
    if ('raw' in result) {
      await held?.abandon();
      return { kind: 'raw', raw: result.raw, contentType: result.contentType, headers: result.headers ?? {} };
    }
    const status = result.status ?? route.status ?? 200;
    const reply = { ok: true, ...result.body };
    await held?.completed(status, reply, result.headers ?? {});
    return { kind: 'json', status, body: reply, headers: result.headers ?? {}, replayed: false };
  }
}

interface HeldKey {
  newId(prefix: string): string;
  resumedFrom?: number;
  completed(status: number, body: Record<string, unknown>, headers: Record<string, string>): Promise<void>;
  failed(error: unknown): Promise<void>;
  abandon(): Promise<void>;
}

/**
 * Takes the key for this call, or answers the call from it: the stored reply, a conflict, or busy. A refusal
 * is kept like a success, since a retry would be refused alike; a server fault is not, so that a retry runs
 * again.
 */
async function holdIdempotencyKey(services: Services, call: Call, scope: string, key: string): Promise<HeldKey | { replay: Outcome }> {
  const store = services.vault.idempotency;
  const begun = await store.begin(scope, key, store.requestHashes(call.route.method.toUpperCase(), call.path, call.body ?? {}));
  switch (begun.kind) {
    case 'replay':
      return { replay: { kind: 'json', status: begun.status, body: begun.body, headers: begun.headers, replayed: true } };
    case 'conflict':
      throw new ApiError(409, 'idempotency_conflict', `this ${call.idempotencyField} was first used for another request (method, path or body); use a new key for a new request`);
    case 'busy':
      throw new ApiError(409, 'idempotency_in_progress', `the first request with this ${call.idempotencyField} is still running; retry later to get its reply`, {}, { 'Retry-After': '1' });
    case 'run':
      break;
    default: {
      const unknown: never = begun;
      throw new Error(`unhandled idempotency outcome ${JSON.stringify(unknown)}`);
    }
  }
  const { attempt } = begun;
  const { secrets } = call.route;
  // The reply goes out even when it cannot be stored: failing it would invite the retry it cannot answer.
  const completed = async (status: number, reply: Record<string, unknown>, headers: Record<string, string>) => {
    const shown = secrets && status < 400 ? { withoutSecrets: { body: withoutSecrets(reply, secrets, Date.now()), headers }, forMs: services.config.secretReplayMs } : undefined;
    const stored = await store.complete(scope, key, attempt, { status, body: reply, headers }, shown).catch((err) => {
      services.log.error({ err, scope }, 'idempotent reply not stored');
      return true;
    });
    if (!stored) services.log.warn({ scope }, 'idempotency lease lost before the reply was stored: a retry ran it too');
  };
  const abandon = async () => {
    await store.abandon(scope, key, attempt).catch((err) => services.log.error({ err, scope }, 'idempotency key not freed; it frees itself when its lease runs out'));
  };
  return {
    newId: idempotentIds(scope, key, begun.requestHash, begun.createdAt),
    resumedFrom: begun.resumed ? begun.createdAt : undefined,
    completed,
    abandon,
    async failed(error) {
      const refusal = refusalOf(error);
      if (refusal && refusal.status < 500) return completed(refusal.status, envelope(refusal), refusal.headers);
      // A fault may come after the request took effect: the retry takes over as a resumed attempt, with the
      // same ids, and finds what this one wrote.
      await store.letGo(scope, key, attempt).catch((err) => services.log.error({ err, scope }, 'idempotency key not let go; it frees itself when its lease runs out'));
    },
  };
}

/** The agent id for a key, provided the citizen is on the ledger (not a half-finished registration). */
async function authenticate(services: Services, key: string): Promise<string | undefined> {
  if (!key.startsWith('svc_sk_') || key.length > 128) return undefined;
  const agentId = await services.vault.authenticate(key);
  if (!agentId) return undefined;
  const known = (id: string) => services.writer.read((state) => state.citizens.byId.has(id));
  if (await known(agentId)) return agentId;
  // Registered through another API process: bring this one's ledger state up to date and look again.
  await services.writer.sync();
  return (await known(agentId)) ? agentId : undefined;
}

/**
 * A client that reads right after a write sees it: wait (bounded) for the read models the route reads to reach
 * the head. If they do not (the projector is stopped, or its database connections are being cut), 503 with
 * Retry-After: an answer from behind the head could deny the caller's own write, e.g. a 404 for the post it just made.
 */
async function readYourWrites(services: Services, reads: readonly ProjectionName[]): Promise<void> {
  // The stored head, not this process's: the write may have gone through another API process.
  const head = await services.ledgerHead.head();
  if (head <= services.projection.positionOf(reads)) return;
  if (await services.projection.waitFor(head, services.config.readYourWritesMs, reads)) return;
  throw new ApiError(
    503,
    'unavailable',
    `the read models (${reads.join(', ')}) are behind the ledger (at ${services.projection.positionOf(reads)} of ${head}) and did not catch up within ${services.config.readYourWritesMs} ms; retry shortly`,
    {},
    { 'Retry-After': '1' },
  );
}
