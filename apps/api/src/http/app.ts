import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type NextFunction, type Request, type Response } from 'express';
import pinoHttp from 'pino-http';
import type { Services } from '../services';
import { ApiError, refusalOf } from './errors';
import { presentedKey } from './credentials';
import { envelope, IDEMPOTENCY_KEY, Pipeline } from './pipeline';
import { jsonBody } from './jsonBody';
import { expressPath, type RouteSpec } from './route';
import { boardRouter, isBoardPage, sendBoardError } from '../board/router';

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
const READ_METHODS = new Set(['GET', 'HEAD']);

function send(res: Response, status: number, body: Record<string, unknown>): void {
  // Only a GET or HEAD can be answered 304 from its freshness, which express's res.json checks; any other
  // reply is written straight, without the content negotiation and freshness work it would not use.
  if (READ_METHODS.has(res.req.method)) {
    res.status(status).json(body);
    return;
  }
  const json = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

function sendError(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  send(res, error.status, envelope(error));
}

const MCP_PATHS = new Set(['/mcp', '/mcp/read']);

/** JSON-RPC's own codes for a message it cannot take; the envelope's code and message ride in `data`. */
function sendJsonRpcError(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const code = error.code === 'invalid_json' ? -32700 : error.status === 400 || error.status === 413 || error.status === 415 ? -32600 : -32000;
  send(res, error.status, { jsonrpc: '2.0', id: null, error: { code, message: error.message, data: envelope(error).error } });
}

export interface HttpApp {
  app: express.Express;
  ready: Promise<void>;
  close(): void;
}

export function createApp(services: Services, routes: RouteSpec[]): HttpApp {
  const { config, log, metrics } = services;
  const app = express();
  const pipeline = new Pipeline(services);
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
        genReqId: (req) => req.id,
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
  app.use(jsonBody(config.bodyLimit));

  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      metrics.http.observe({ method: req.method, route, status: String(res.statusCode) }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  });

  // Requests without a key are counted per IP here; with a key, per citizen once it authenticates
  // (in the pipeline), so a made-up key buys no fresh allowance. Health and metrics stay reachable.
  app.use(async (req, _res, next) => {
    if (req.path === '/healthz' || req.path === '/readyz' || req.path === '/metrics' || req.method === 'OPTIONS') return next();
    if (presentedKey(req)) return next();
    try {
      await pipeline.countAnonymous(req.ip ?? 'unknown');
      next();
    } catch (error) {
      next(error);
    }
  });

  const methodsByPath = new Map<string, Set<string>>();
  for (const spec of routes) {
    const path = expressPath(spec.path);
    const methods = methodsByPath.get(path) ?? new Set<string>();
    methods.add(spec.method.toUpperCase());
    if (spec.method === 'get') methods.add('HEAD');
    methodsByPath.set(path, methods);
    app[spec.method](path, (req, res, next) => serve(spec, req, res).catch(next));
  }

  async function serve(spec: RouteSpec, req: Request, res: Response): Promise<void> {
    const outcome = await pipeline.invoke({
      route: spec,
      apiKey: presentedKey(req),
      ip: req.ip ?? 'unknown',
      body: req.body,
      query: { ...(req.query as Record<string, unknown>) },
      params: { ...req.params },
      path: req.path,
      idempotencyKey: req.get(IDEMPOTENCY_KEY),
      idempotencyField: IDEMPOTENCY_KEY,
      ifNoneMatch: req.get('if-none-match'),
      req,
      res,
    });
    if (outcome.kind === 'sent' || res.headersSent) return;
    for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
    switch (outcome.kind) {
      case 'notModified':
        res.status(304).end();
        return;
      case 'raw':
        res.status(200).type(outcome.contentType).send(outcome.raw);
        return;
      case 'json':
        if (outcome.replayed) res.setHeader(IDEMPOTENT_REPLAYED, 'true');
        send(res, outcome.status, outcome.body);
        return;
    }
  }

  app.use(boardRouter(pipeline, routes));

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
    // An MCP client reads JSON-RPC, even about a body it could not have parsed.
    // Routing is case-insensitive and takes a trailing slash, so /MCP/ is /mcp too.
    const fail = MCP_PATHS.has(req.path.toLowerCase().replace(/\/+$/, ''))
      ? (e: ApiError) => sendJsonRpcError(res, e)
      : isBoardPage(req.path)
        ? (e: ApiError) => sendBoardError(res, e)
        : (e: ApiError) => sendError(res, e);
    const refusal = refusalOf(error);
    if (refusal) return fail(refusal);
    const type = (error as { type?: string }).type;
    if (type === 'entity.parse.failed') return fail(new ApiError(400, 'invalid_json', 'the body is not valid JSON'));
    if (type === 'entity.too.large') return fail(new ApiError(413, 'payload_too_large', `the body is larger than ${config.bodyLimit}`));
    if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
      return fail(new ApiError(415, 'unsupported_media_type', 'send UTF-8 JSON'));
    }
    if (type === 'request.aborted') return;
    // Anything else the framework refused as the client's fault (a malformed %-escape in the path,
    // an unreadable Content-Encoding, ...) is still the client's fault.
    const status = Number((error as { status?: unknown; statusCode?: unknown }).status ?? (error as { statusCode?: unknown }).statusCode);
    if (status >= 400 && status < 500) {
      return fail(new ApiError(status === 413 || status === 415 ? status : 400, status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : 'invalid_request', (error as Error).message || 'bad request'));
    }
    if (error instanceof URIError) return fail(new ApiError(400, 'invalid_request', 'the path has a malformed %-escape'));
    const id = (req as Request & { id?: string }).id ?? 'unknown';
    log.error({ err: error, reqId: id, method: req.method, url: req.path }, 'request failed');
    fail(new ApiError(500, 'internal', `internal error; quote request id ${id} when reporting it`, { request_id: id }));
  });

  return { app, ready: pipeline.ready, close: () => pipeline.close() };
}

function matches(expressRoutePath: string, actual: string): boolean {
  const pattern = expressRoutePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '[^/]+');
  return new RegExp(`^${pattern}/?$`).test(actual);
}

const IDEMPOTENT_REPLAYED = 'Idempotent-Replayed';
