import type { ReadRoute } from './source';

/** One board page: its path (express syntax), its view, and what it reads from the JSON routes. */
export interface BoardPage {
  path: string;
  /** The view under views/, and the page name the scripts see (`data-page`). */
  view: string;
  load(read: ReadRoute, params: Record<string, string>): Promise<{ title: string; data: Record<string, unknown>; mint?: string }>;
}
