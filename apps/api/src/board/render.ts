import fs from 'node:fs';
import path from 'node:path';
import { Eta } from 'eta';
import { MEDIA_PATH } from '../tokens/media';

/** Every `<%= %>` is escaped (autoEscape); only `include` and the layout's body are written raw. */
const views = new Eta({ autoEscape: true, cache: true });
const VIEWS = path.join(__dirname, 'views');
// Compiled once, by name (`@front`): rendering then skips resolving a file path on every page and include.
for (const file of fs.readdirSync(VIEWS).filter((f) => f.endsWith('.eta'))) {
  views.loadTemplate(`@${path.basename(file, '.eta')}`, fs.readFileSync(path.join(VIEWS, file), 'utf8'));
}

/** A link a citizen gave, kept only when it is http(s): a `javascript:` or `data:` URL never becomes an href. */
export function safeUrl(url: unknown): string | null {
  return typeof url === 'string' && /^https?:\/\/[^\s]+$/i.test(url) ? url : null;
}

const MEDIA = new RegExp(`^(?:https?://[^/]+)?(${MEDIA_PATH}/[A-Za-z0-9._-]+)$`);

/** An image shown only from this service's own media route, as a same-origin path (the CSP allows no other). */
export function mediaPath(url: unknown): string | null {
  const match = typeof url === 'string' ? MEDIA.exec(url) : null;
  return match ? match[1]! : null;
}

/** SOL and prices: four significant figures below 1, four decimals above; a dash for unknown. */
export function num(value: unknown, digits = 4): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  return Math.abs(value) >= 1 || value === 0 ? value.toFixed(digits) : value.toPrecision(digits);
}

export function usd(value: unknown): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  // toFixed and a regex, not toLocaleString: ICU formatting costs more than the rest of a row.
  return Math.abs(value) >= 0.01 || value === 0 ? `$${value.toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}` : `$${value.toPrecision(3)}`;
}

export function when(ms: unknown): string {
  return typeof ms === 'number' ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '—';
}

export function short(hash: unknown): string {
  return typeof hash === 'string' && hash.length > 14 ? `${hash.slice(0, 6)}…${hash.slice(-6)}` : String(hash ?? '');
}

/** What a template may call, beside its page's data. */
export const helpers = { safeUrl, mediaPath, num, usd, when, short };

export function renderPage(view: string, title: string, data: Record<string, unknown>, page: { name: string; mint?: string }): string {
  return views.render(`@${view}`, { ...data, title, page, h: helpers });
}
