import { defineRoute, type RouteSpec } from '../../http/route';
import type { Services } from '../../services';
import { routeTable } from '../table';

/** A discovery document as its route file states it: where it is served, what it is, and how it is written from the route table. */
export interface GeneratedDocument extends Pick<RouteSpec, 'path' | 'summary' | 'description' | 'response' | 'params' | 'errors'> {
  contentType: string;
  /** `params` are the path parameters, validated by the `params` schema when the document has one. */
  render(routes: RouteSpec[], config: Services['config'], params: Record<string, string>): string;
}

/**
 * A public GET of a document generated from the route table on each request, so that it cannot disagree with what
 * is dispatched; it is served as it is, not in the envelope.
 */
export function generatedDocument({ contentType, render, ...row }: GeneratedDocument): RouteSpec {
  return defineRoute({
    ...row,
    method: 'get',
    auth: 'public',
    tag: 'Discovery',
    produces: [contentType.split(';')[0]!],
    async handle({ params }, { config }) {
      return { raw: render(routeTable(), config, (params ?? {}) as Record<string, string>), contentType };
    },
  });
}
