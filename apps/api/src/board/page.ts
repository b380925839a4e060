import type { ReadRoute } from './source';

/** One board page: its path (express syntax), its view, and what it reads from the JSON routes. */
export interface BoardPage {
  path: string;
  /** The view under views/, and the page name the scripts see (`data-page`). */
  view: string;
  load(read: ReadRoute, params: Record<string, string>): Promise<PageData>;
}

export interface PageData {
  title: string;
  data: Record<string, unknown>;
  mint?: string;
  /**
   * The reply the route keeps and hands out again while nothing changed (the front's posts at one read-model
   * position, the cached leaderboard): the page rendered from it is kept as long as it is, and rendered once.
   */
  kept?: object;
}
