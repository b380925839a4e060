import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';

// The page's globals, in functions that run in the browser (this project compiles without the DOM library).
declare const window: any;
declare const document: any;
declare const location: any;
declare const XMLHttpRequest: any;

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.join(__dirname, '..', '..', 'test-output', 'screenshots');

export async function launchChromium(): Promise<Browser> {
  const puppeteer = (await import('puppeteer-core')).default;
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/**
 * Installed before any page script: a dialog, a fetch or XHR that the board itself would never make, and any
 * CSP violation (an inline handler or script that got into the page, which the CSP then stopped) are noted
 * in `window.__xss`. The board's own scripts fetch only the coin's JSON routes, the ledger's /changes, and a live
 * post's author by agent id.
 */
function hooks(): void {
  const notes: string[] = [];
  (window as any).__xss = notes;
  const note = (what: string) => notes.push(what);
  window.alert = (m?: unknown) => note(`alert:${String(m)}`);
  window.confirm = (m?: unknown) => (note(`confirm:${String(m)}`), false);
  window.prompt = (m?: unknown) => (note(`prompt:${String(m)}`), null);
  const ownRead = (url: string) => {
    const at = new URL(url, location.href);
    return at.origin === location.origin && (/^\/api\/v1\/tokens\/[1-9A-HJ-NP-Za-km-z]+(\/candles)?$/.test(at.pathname) || /^\/api\/v1\/agents\/agent_[0-9A-Z]+$/.test(at.pathname) || at.pathname === '/api/v1/changes');
  };
  const realFetch = window.fetch;
  window.fetch = function (this: unknown, input: any, init?: unknown) {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!ownRead(url)) note(`fetch:${url}`);
    return realFetch.call(this, input, init);
  };
  const open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (this: unknown, ...args: any[]) {
    note(`xhr:${String(args[1])}`);
    return (open as any).apply(this, args);
  };
  document.addEventListener('securitypolicyviolation', (event: any) => note(`csp:${event.violatedDirective}:${event.blockedURI}`));
}

export interface OpenedPage {
  page: Page;
  dialogs: string[];
  errors: string[];
}

/** A tab with the hooks in, at `width` px, on `url`; page errors and dialogs are collected. */
export async function openPage(browser: Browser, url: string, width = 1280): Promise<OpenedPage> {
  const page = await browser.newPage();
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.setViewport({ width, height: 900 });
  await page.evaluateOnNewDocument(hooks);
  const res = await page.goto(url, { waitUntil: 'load' });
  if (!res) throw new Error(`no response for ${url}`);
  return { page, dialogs, errors };
}

export async function noted(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as any).__xss as string[]);
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations; evaluated over the DevTools protocol, which the page's CSP does not govern. */
export async function axeViolations(page: Page): Promise<Array<{ id: string; impact: string; nodes: string[] }>> {
  await page.evaluate(AXE);
  const violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: unknown }> }> = await page.evaluate(
    () => (window as any).axe.run(document, { resultTypes: ['violations'] }).then((r: any) => r.violations),
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact!, nodes: v.nodes.map((n) => JSON.stringify(n.target)) }));
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) as `${string}.png`, fullPage: true });
}
