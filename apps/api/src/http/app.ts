import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type NextFunction, type Request, type Response } from 'express';
import pinoHttp from 'pino-http';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import Redis from 'ioredis';
import { monotonicFactory } from 'ulid';
import { bodyValidator, queryValidator, type Validator } from '@svc/contracts';
import { Rejected } from '@svc/domain';
import { idempotencyRequestHash, idempotentIds, isIdempotencyKey } from '@svc/vault';
import type { Services } from '../services';
import { ApiError, fromRejected, unauthorized } from './errors';
import { presentedKey } from './credentials';
import { expressPath, type RouteResult, type RouteSpec } from './route';

const ulid = monotonicFactory();
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Query parameters whose values are private: memory note names, doorbell URLs (which often carry tokens). */
const PRIVATE_QUERY = ['key', 'url'];

/** The request URL as a log line may show it. */
export function loggableUrl(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = new URLSearchParams(url.slice(at + 1));
  for (const name of PRIVATE_QUERY) if (query.has(name)) query.set(name, '[redacted]');
  return `${url.slice(0, at)}?${query.toString().replaceAll('%5Bredacted%5D', '[redacted]')}`;
}
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function send(res: Response, status: number, body: Record<string, unknown>): void {
  res.status(status).json(body);
}

function envelope(error: ApiError): Record<string, unknown> {
  return { ok: false, error: { code: error.code, message: error.message, ...error.details } };
}

function sendError(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  send(res, error.status, envelope(error));
}

interface Limiters {
  requests: RateLimiterAbstract;
  registrations: RateLimiterAbstract;
  /** Resolves once the shared store answers (or after a bound); until then counts are per process. */
  ready: Promise<void>;
  close(): void;
}

function createLimiters(services: Services): Limiters {
  const { config } = services;
  const rps = config.requestsPerSecond;
  const perHour = config.registerPerIpPerHour;
  // The request rate is counted per process: a Redis round trip on every request would cost more
  // than the limit protects. Registrations are counted in Redis when there is one, so that two API
  // processes still hold one address to one limit.
  const requests = new RateLimiterMemory({ points: rps * 10, duration: 10 });
  if (config.redisUrl) {
    const client = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
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

interface CompiledRoute {
  spec: RouteSpec;
  body?: Validator;
  query?: Validator;
  params?: Validator;
}

export interface HttpApp {
  app: express.Express;
  ready: Promise<void>;
  close(): void;
}

export function createApp(services: Services, routes: RouteSpec[]): HttpApp {
  const { config, log, metrics } = services;
  const app = express();
  const limiters = createLimiters(services);
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false);

  app.use((req, res, next) => {
    const given = req.get('x-request-id');
    const id = given && REQUEST_ID.test(given) ? given : randomUUID();
    (req as Request & { id: string }).id = id;
    res.setHeader('X-Request-Id', id);
    next();
  });
  // A request log line per request at info and below; above it, errors still carry the request id.
  if (log.isLevelEnabled('info')) {
    app.use(
      pinoHttp({
        logger: log,
        genReqId: (req) => (req as unknown as { id: string }).id,
        quietReqLogger: true,
        autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/metrics' },
        serializers: {
          req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: loggableUrl(req.url) }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
      }),
    );
  }
  app.use(cors({ origin: '*', exposedHeaders: ['ETag', 'X-Request-Id', 'Retry-After', IDEMPOTENT_REPLAYED], maxAge: 600 }));

  // Bodies: JSON only. An empty body is an empty object.
  app.use((req, _res, next) => {
    if (!BODY_METHODS.has(req.method)) return next();
    const length = Number(req.get('content-length') ?? 0);
    const hasBody = length > 0 || req.get('transfer-encoding') !== undefined;
    if (hasBody && !req.is('application/json') && !req.is('application/*+json')) {
      return next(new ApiError(415, 'unsupported_media_type', 'send the body as JSON with "Content-Type: application/json"'));
    }
    next();
  });
  app.use(express.json({ limit: config.bodyLimit, strict: true, type: ['application/json', 'application/*+json'] }));

  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      metrics.http.observe({ method: req.method, route, status: String(res.statusCode) }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  });

  // Requests without a key are counted per IP here; with a key, per citizen once it authenticates
  // (in handle), so a made-up key buys no fresh allowance. Health and metrics stay reachable.
  app.use(async (req, _res, next) => {
    if (req.path === '/healthz' || req.path === '/readyz' || req.path === '/metrics' || req.method === 'OPTIONS') return next();
    if (presentedKey(req)) return next();
    try {
      await consume(limiters.requests, `ip:${req.ip}`, 'too many requests');
      next();
    } catch (error) {
      next(error);
    }
  });

  const methodsByPath = new Map<string, Set<string>>();
  for (const spec of routes) {
    const compiled: CompiledRoute = {
      spec,
      body: spec.body ? bodyValidator(spec.body) : undefined,
      query: spec.query ? queryValidator(spec.query) : undefined,
      params: spec.params ? queryValidator(spec.params) : undefined,
    };
    const path = expressPath(spec.path);
    const methods = methodsByPath.get(path) ?? new Set<string>();
    methods.add(spec.method.toUpperCase());
    if (spec.method === 'get') methods.add('HEAD');
    methodsByPath.set(path, methods);
    app[spec.method](path, (req, res, next) => handle(compiled, req, res).catch(next));
  }

  async function handle(route: CompiledRoute, req: Request, res: Response): Promise<void> {
    const { spec } = route;
    if (spec.path === '/api/v1/register') {
      await consume(limiters.registrations, `ip:${req.ip}`, 'too many registrations from this address');
    }
    // Who is calling comes first: a missing or unknown key is 401 whatever the body holds.
    const key = presentedKey(req);
    let agentId: string | undefined;
    if (spec.auth !== 'public' && key) agentId = await authenticate(services, key);
    if (spec.auth === 'auth' && !agentId) throw unauthorized();
    if (key) await consume(limiters.requests, agentId ? `agent:${agentId}` : `ip:${req.ip}`, 'too many requests');

    const body = route.body ? (req.body ?? {}) : undefined;
    if (route.body) {
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw new ApiError(400, 'invalid_request', 'the body must be a JSON object', { field: '' });
      }
      const invalid = route.body(body);
      if (invalid) throw new ApiError(400, invalid.code ?? 'invalid_request', invalid.message, { field: invalid.field });
    }
    const query: Record<string, unknown> = { ...(req.query as Record<string, unknown>) };
    for (const [name, value] of Object.entries(query)) {
      if (Array.isArray(value) || (value !== null && typeof value === 'object')) {
        throw new ApiError(400, 'invalid_request', `${name} must be given once, as a plain value`, { field: name });
      }
    }
    if (route.query) {
      const invalid = route.query(query);
      if (invalid) throw new ApiError(400, invalid.code ?? 'invalid_request', invalid.message, { field: invalid.field });
    }
    const params: Record<string, unknown> = { ...req.params };
    if (route.params) {
      const invalid = route.params(params);
      if (invalid) throw new ApiError(400, invalid.code ?? 'invalid_request', invalid.message, { field: invalid.field });
    }
    const idempotencyKey = idempotencyKeyOf(spec, req);
    // A public POST (register) is scoped by address too: its replay carries the first caller's secrets.
    const held = idempotencyKey === undefined ? undefined : await holdIdempotencyKey(services, req, res, agentId ?? `public:${req.ip}`, idempotencyKey);
    if (held === 'replayed') return;
    if (spec.consistentRead) await readYourWrites(services);
    let result: RouteResult;
    try {
      const newId = held?.newId ?? ((prefix: string) => `${prefix}${ulid()}`);
      result = await spec.handle({ body, query, params, agentId, idempotencyKey, newId, resumedFrom: held?.resumedFrom, req, res }, services);
    } catch (error) {
      await held?.failed(error);
      throw error;
    }
    // Only a JSON reply can be kept (no POST answers otherwise): anything else frees the key.
    if (res.headersSent || !('body' in result)) await held?.abandon();
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    if ('notModified' in result) {
      res.status(304).end();
    } else if ('raw' in result) {
      res.status(200).type(result.contentType).send(result.raw);
    } else {
      const status = result.status ?? spec.status ?? 200;
      const reply = { ok: true, ...result.body };
      await held?.completed(status, reply, result.headers ?? {});
      send(res, status, reply);
    }
  }

  app.use((req, _res, next) => {
    for (const [path, methods] of methodsByPath) {
      if (matches(path, req.path)) {
        return next(
          new ApiError(405, 'method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${[...methods].join(', ')}`, {}, { Allow: [...methods].join(', ') }),
        );
      }
    }
    next(new ApiError(404, 'not_found', `no route ${req.method} ${req.path}; GET /api/v1/surface lists them`));
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    if (error instanceof ApiError) return sendError(res, error);
    if (error instanceof Rejected) return sendError(res, fromRejected(error));
    const type = (error as { type?: string }).type;
    if (type === 'entity.parse.failed') return sendError(res, new ApiError(400, 'invalid_json', 'the body is not valid JSON'));
    if (type === 'entity.too.large') return sendError(res, new ApiError(413, 'payload_too_large', `the body is larger than ${config.bodyLimit}`));
    if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
      return sendError(res, new ApiError(415, 'unsupported_media_type', 'send UTF-8 JSON'));
    }
    if (type === 'request.aborted') return;
    // Anything else the framework refused as the client's fault (a malformed %-escape in the path,
    // an unreadable Content-Encoding, ...) is still the client's fault.
    const status = Number((error as { status?: unknown; statusCode?: unknown }).status ?? (error as { statusCode?: unknown }).statusCode);
    if (status >= 400 && status < 500) {
      return sendError(res, new ApiError(status === 413 || status === 415 ? status : 400, status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : 'invalid_request', (error as Error).message || 'bad request'));
    }
    if (error instanceof URIError) return sendError(res, new ApiError(400, 'invalid_request', 'the path has a malformed %-escape'));
    const id = (req as Request & { id?: string }).id ?? 'unknown';
    log.error({ err: error, reqId: id, method: req.method, url: req.path }, 'request failed');
    sendError(res, new ApiError(500, 'internal', `internal error; quote request id ${id} when reporting it`, { request_id: id }));
  });

  return { app, ready: limiters.ready, close: () => limiters.close() };
}

function matches(expressRoutePath: string, actual: string): boolean {
  const pattern = expressRoutePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '[^/]+');
  return new RegExp(`^${pattern}/?$`).test(actual);
}

const IDEMPOTENCY_KEY = 'Idempotency-Key';
const IDEMPOTENT_REPLAYED = 'Idempotent-Replayed';

/** A POST's Idempotency-Key, if it sent one; other methods are safe to retry as they are. */
function idempotencyKeyOf(spec: RouteSpec, req: Request): string | undefined {
  if (spec.method !== 'post') return undefined;
  const key = req.get(IDEMPOTENCY_KEY);
  if (key === undefined) return undefined;
  if (!isIdempotencyKey(key)) {
    throw new ApiError(400, 'invalid_request', `the ${IDEMPOTENCY_KEY} header must be 1-255 visible ASCII characters`, { field: IDEMPOTENCY_KEY });
  }
  return key;
}

interface HeldKey {
  newId(prefix: string): string;
  resumedFrom?: number;
  completed(status: number, body: Record<string, unknown>, headers: Record<string, string>): Promise<void>;
  failed(error: unknown): Promise<void>;
  abandon(): Promise<void>;
}

/**
 * Takes the key for this request, or answers the request from it: the stored reply, a conflict, or busy.
 * A refusal is kept like a success, since a retry would be refused alike; a server fault is not, so that
 * a retry runs again.
 */
async function holdIdempotencyKey(services: Services, req: Request, res: Response, scope: string, key: string): Promise<HeldKey | 'replayed'> {
  const store = services.vault.idempotency;
  const requestHash = idempotencyRequestHash(req.method, req.path, req.body ?? {});
  const begun = await store.begin(scope, key, requestHash);
  switch (begun.kind) {
    case 'replay':
      for (const [name, value] of Object.entries(begun.headers)) res.setHeader(name, value);
      res.setHeader(IDEMPOTENT_REPLAYED, 'true');
      send(res, begun.status, begun.body);
      return 'replayed';
    case 'conflict':
      throw new ApiError(409, 'idempotency_conflict', `this ${IDEMPOTENCY_KEY} was first used for another request (method, path or body); use a new key for a new request`);
    case 'busy':
      throw new ApiError(409, 'idempotency_in_progress', `the first request with this ${IDEMPOTENCY_KEY} is still running; retry later to get its reply`, {}, { 'Retry-After': '1' });
    case 'run':
      break;
    default: {
      const unknown: never = begun;
      throw new Error(`unhandled idempotency outcome ${JSON.stringify(unknown)}`);
    }
  }
  const { attempt } = begun;
  // The reply goes out even when it cannot be stored: failing it would invite the retry it cannot answer.
  const completed = async (status: number, body: Record<string, unknown>, headers: Record<string, string>) => {
    const stored = await store.complete(scope, key, attempt, { status, body, headers }).catch((err) => {
      services.log.error({ err, scope }, 'idempotent reply not stored');
      return true;
    });
    if (!stored) services.log.warn({ scope }, 'idempotency lease lost before the reply was stored: a retry ran it too');
  };
  const abandon = async () => {
    await store.abandon(scope, key, attempt).catch((err) => services.log.error({ err, scope }, 'idempotency key not freed; it frees itself when its lease runs out'));
  };
  return {
    newId: idempotentIds(scope, key, requestHash, begun.createdAt),
    resumedFrom: begun.resumed ? begun.createdAt : undefined,
    completed,
    abandon,
    async failed(error) {
      const refusal = error instanceof ApiError ? error : error instanceof Rejected ? fromRejected(error) : undefined;
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
  const known = (id: string) => services.writer.view((state) => state.citizens.byId.has(id));
  if (known(agentId)) return agentId;
  // Registered through another API process: bring this one's ledger state up to date and look again.
  await services.writer.sync();
  return known(agentId) ? agentId : undefined;
}

/** A client that reads right after a write sees it: wait (bounded) for the read models to reach the head. */
async function readYourWrites(services: Services): Promise<void> {
  // The stored head, not this process's: the write may have gone through another API process.
  const head = await services.ledgerHead.head();
  if (head > services.projection.seq) await services.projection.waitFor(head, services.config.readYourWritesMs);
}
