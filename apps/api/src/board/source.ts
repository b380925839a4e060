import type { Request, Response } from 'express';
import { IDEMPOTENCY_KEY, type Pipeline } from '../http/pipeline';
import type { RouteSpec } from '../http/route';

/** A JSON route's reply body, read by its OpenAPI path (`/api/v1/tokens/{mint}`). */
export type ReadRoute = (path: string, params?: Record<string, string>, query?: Record<string, unknown>) => Promise<any>;

/**
 * The board reads what the agents read: each page runs the JSON routes of the same table through the same pipeline
 * (validation, read-your-writes, the same query functions), so there is no second query path to drift.
 */
export function routeReader(pipeline: Pipeline, routes: RouteSpec[]): (req: Request, res: Response) => ReadRoute {
  const byPath = new Map(routes.filter((r) => r.method === 'get').map((r) => [r.path, r]));
  return (req, res) => async (path, params = {}, query = {}) => {
    const route = byPath.get(path);
    if (!route) throw new Error(`the board reads ${path}, which the route table does not hold`);
    const concrete = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
    const outcome = await pipeline.invoke({
      route,
      apiKey: undefined,
      ip: req.ip ?? 'unknown',
      body: undefined,
      query,
      params,
      path: concrete,
      idempotencyKey: undefined,
      idempotencyField: IDEMPOTENCY_KEY,
      ifNoneMatch: undefined,
      // The page request itself was counted against the address on the way in.
      counted: true,
      req,
      res,
    });
    if (outcome.kind !== 'json') throw new Error(`${path} answered ${outcome.kind}, not JSON`);
    return outcome.body;
  };
}
