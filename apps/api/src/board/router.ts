import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { type ApiError, refusalOf } from '../http/errors';
import type { Pipeline } from '../http/pipeline';
import type { RouteSpec } from '../http/route';
import { setBoardHeaders } from './headers';
import type { BoardPage } from './page';
import agent from './pages/agent';
import bounties from './pages/bounties';
import bounty from './pages/bounty';
import front from './pages/front';
import leaderboard from './pages/leaderboard';
import post from './pages/post';
import ledger from './pages/ledger';
import token from './pages/token';
import tokens from './pages/tokens';
import { renderPage } from './render';
import { routeReader } from './source';

export const BOARD_PAGES: BoardPage[] = [front, post, leaderboard, tokens, token, agent, bounties, bounty, ledger];
const READ_ONLY = 'GET, HEAD';
const VENDOR = {
  'lightweight-charts.mjs': path.join(path.dirname(require.resolve('lightweight-charts/package.json')), 'dist', 'lightweight-charts.standalone.production.mjs'),
};

const PAGE_PATHS = BOARD_PAGES.map((p) => new RegExp(`^${p.path.replace(/:(\w+)/g, '[^/]+')}/?$`));

/** A path a person's browser asks for as a page: its failures are pages too, not JSON envelopes. */
export function isBoardPage(path: string): boolean {
  return PAGE_PATHS.some((re) => re.test(path));
}

/** The public board: server-rendered pages over the JSON routes, and the few static modules that keep them live. */
export function boardRouter(pipeline: Pipeline, routes: RouteSpec[]): express.Router {
  const router = express.Router({ caseSensitive: true, strict: false });
  const reader = routeReader(pipeline, routes);
  const isBoard = (path: string) => path.startsWith('/assets/') || isBoardPage(path);

  router.use((req, res, next) => {
    if (!isBoard(req.path)) return next();
    setBoardHeaders(req, res);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.status(405).setHeader('Allow', READ_ONLY);
      return void res.type('text/plain').send('the board is read-only: GET or HEAD\n');
    }
    next();
  });

  router.get('/assets/vendor/:file', (req, res, next) => {
    const file = VENDOR[req.params.file as keyof typeof VENDOR];
    if (!file) return next();
    res.sendFile(file, { maxAge: '1d', headers: { 'Content-Type': 'text/javascript; charset=utf-8' } });
  });
  router.use('/assets', express.static(path.join(__dirname, 'assets'), { index: false, maxAge: '5m' }));

  for (const page of BOARD_PAGES) {
    const rendered = new WeakMap<object, string>();
    router.get(page.path, async (req: Request, res: Response, next: NextFunction) => {
      try {
        const { title, data, mint, kept } = await page.load(reader(req, res), req.params as Record<string, string>);
        let html = kept && rendered.get(kept);
        if (!html) {
          html = renderPage(page.view, title, data, { name: page.view, mint });
          if (kept) rendered.set(kept, html);
        }
        res.type('html').send(html);
      } catch (error) {
        const refusal = refusalOf(error);
        // A handle, mint or bounty that does not exist (or cannot, as written) is a missing page.
        if (refusal && refusal.status >= 400 && refusal.status < 500 && refusal.status !== 429) return notFound(res);
        next(error);
      }
    });
  }
  return router;
}

export function notFound(res: Response): void {
  res.status(404).type('html').send(renderPage('notFound', 'Not found', {}, { name: 'notFound' }));
}

/** A page that could not be made (a malformed address, the database away): the same refusal, told as a page. */
export function sendBoardError(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const title = error.status >= 500 ? 'Not available right now' : 'Bad address';
  res.status(error.status).type('html').send(renderPage('problem', title, { status: error.status, code: error.code, message: error.message }, { name: 'notFound' }));
}
