import type { Browser } from 'puppeteer-core';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { axeViolations, launchChromium, noted, openPage, screenshot } from '../support/browser';
import { call } from '../support/http';
import { embeddedService, type EmbeddedService } from '../support/servers';

// The page's globals, in functions that run in the browser (this project compiles without the DOM library).
declare const window: any;
declare const document: any;

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Hostile text as citizens may write it: each would run, fetch, or break out of an attribute if it were not escaped. */
const XSS = {
  script: '<script>alert("post")</script>',
  img: '<img src=x onerror="alert(\'img\')">',
  svg: '"><svg onload=fetch("/pwned-svg")>',
  breakout: "' autofocus onfocus='alert(1)' x='",
  template: '<%= 7*7 %> {{7*7}} ${7*7}',
  url: 'javascript:alert("url")',
};
const COIN = { name: '<img src=x onerror=alert(9)>', symbol: '<b>"x\'', description: '</p><script>fetch("/pwned-desc")</script>', twitter: 'javascript:alert("tw")', website: '"><svg/onload=alert(2)>' };
const BIO = '<svg onload=alert("bio")></svg><a href="javascript:alert(3)">me</a>';
const BOUNTY = { title: '<script>alert("bounty")</script>', body: '<iframe src="javascript:alert(4)"></iframe>' };

/**
 * The board in a real browser (the system chromium), against the whole service: live inserts over /ws, a trade
 * moving the coin page, hostile text that stays text, accessibility, a phone-width layout. One service and one
 * browser for the file; screenshots go to test-output/screenshots.
 */
describe('the public board in chromium', () => {
  let service: EmbeddedService;
  let base: string;
  let browser: Browser;
  let dev: TestCitizen;
  /** Writes the hostile posts: the front gives one author at most a quarter of the page. */
  let poet: TestCitizen;
  let mint: string;
  let bountyId: string;
  let threadId: string;
  const pages: Record<string, string> = {};
  /** Things that are not there, or cannot be, as written: each is the HTML 404 page. */
  const missing: Record<string, string> = {};

  const post = (who: TestCitizen, path: string, body: Record<string, unknown>) => call(base, 'POST', path, { key: who.key, body });

  beforeAll(async () => {
    [service, browser] = await Promise.all([embeddedService('board_browser'), launchChromium()]);
    base = service.server.url;
    dev = await registerCitizen(base, 'dev', { bio: BIO });
    await airdrop(service.server.services.chain.connection, dev.wallet, 5);
    const deployed = await post(dev, '/api/v1/tokens/deploy', { ...COIN, image: PNG, dev_buy_sol: 0.1 });
    expect(deployed.status).toBe(201);
    mint = deployed.body.mint;
    poet = await registerCitizen(base, 'poet');
    for (const body of Object.values(XSS)) expect((await post(poet, '/api/v1/posts', { body })).status).toBe(201);
    const signal = await post(dev, '/api/v1/posts', { body: XSS.img, mint });
    expect(signal.status).toBe(201);
    // A thread: a hostile reply to the signal, and a reply to that reply.
    const reply = await post(poet, '/api/v1/posts', { body: XSS.svg, parent_id: signal.body.post.id });
    expect(reply.status).toBe(201);
    expect((await post(dev, '/api/v1/posts', { body: XSS.breakout, parent_id: reply.body.post.id })).status).toBe(201);
    threadId = signal.body.post.id;
    const bounty = await post(dev, '/api/v1/bounties', { ...BOUNTY, reward_sol: 0.01 });
    expect(bounty.status).toBe(201);
    bountyId = bounty.body.bounty?.id ?? bounty.body.id;
    Object.assign(pages, {
      front: '/',
      thread: `/p/${threadId}`,
      leaderboard: '/leaderboard',
      tokens: '/t',
      token: `/t/${mint}`,
      agent: `/a/${dev.handle}`,
      bounties: '/b',
      bounty: `/b/${bountyId}`,
      ledger: '/ledger',
      notFound: '/a/nobody-here',
    });
    Object.assign(missing, { badMint: '/t/not-a-key', unknownMint: `/t/${dev.wallet}`, unknownPost: '/p/post_01JNOSUCHPOST000000000000', unknownBounty: '/b/nope', slash: '/b/x%2Fy' });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  async function whenLive(page: import('puppeteer-core').Page): Promise<void> {
    await page.waitForFunction(() => document.getElementById('live')?.textContent === 'Live', { timeout: 5_000 });
  }

  it('a post made through the API appears on the open front page within a second, without a reload', async () => {
    const { page } = await openPage(browser, base + '/');
    await whenLive(page);
    await page.evaluate(() => ((window as any).__sameDocument = true));
    const body = `fresh news ${Date.now()} <b>bold?</b>`;
    expect((await post(dev, '/api/v1/posts', { body })).status).toBe(201);
    await page.waitForFunction((text) => [...document.querySelectorAll('#posts .post .body')].some((p) => p.textContent === text), { timeout: 1_000 }, body);
    expect(await page.evaluate(() => (window as any).__sameDocument)).toBe(true);
    expect(await page.$$eval('#posts b', (bold) => bold.length)).toBe(0);
    // The frame names the author by id; the page shows, and links, the handle.
    const author = `#posts .post:first-child .meta a[href="/a/${encodeURIComponent(dev.handle)}"]`;
    await page.waitForFunction((selector, handle) => document.querySelector(selector)?.textContent === handle, { timeout: 5_000 }, author, dev.handle);
    expect(await noted(page)).toEqual([]);
    await page.close();
  });

  it("a buy moves the coin page's price and its chart, and lists among the coin's trades", async () => {
    const { page } = await openPage(browser, base + pages.token!);
    await whenLive(page);
    const price = () => page.$eval('#price_sol', (dd) => dd.textContent);
    const before = await price();
    await page.waitForFunction(() => document.getElementById('chart')!.dataset.candles !== '0', { timeout: 5_000 });
    const tradesBefore = await page.$eval('#chart', (chart) => Number((chart as any).dataset.trades ?? 0));

    const bought = await post(dev, '/api/v1/tokens/buy', { mint, amount_sol: 0.5 });
    expect(bought.status).toBe(200);
    await page.waitForFunction((old) => document.getElementById('price_sol')!.textContent !== old, { timeout: 5_000 }, before);
    expect(Number(await price())).toBeGreaterThan(Number(before));
    await page.waitForFunction((n) => Number(document.getElementById('chart')!.dataset.trades) > n, { timeout: 5_000 }, tradesBefore);
    expect(await noted(page)).toEqual([]);
    await page.close();

    // The page as served (no script) lists the trade, newest first.
    const html = await (await fetch(base + pages.token!)).text();
    const firstRow = html.slice(html.indexOf('<tbody>', html.indexOf('id="trades-h"')), html.indexOf('</tr>', html.indexOf('<tbody>', html.indexOf('id="trades-h"'))));
    expect(firstRow).toContain('>buy<');
    expect(firstRow).toContain(String(bought.body.signature).slice(0, 6));
    // What it moved, as its record states it: the SOL spent and the tokens quoted.
    expect(firstRow).toContain('<td>0.5000</td>');
    expect(firstRow).toContain(`<td>${Number(bought.body.quoted_tokens).toFixed(2)}</td>`);
  });

  it('the ledger page follows every entry, also kinds /ws does not push (a registration), without a reload', async () => {
    const { page } = await openPage(browser, base + '/ledger');
    await page.evaluate(() => ((window as any).__sameDocument = true));
    const newcomer = await registerCitizen(base, 'tail');
    const entry = (await call(base, 'GET', `/api/v1/record/${newcomer.handle}`)).body.events.find((e: { type: string }) => e.type === 'CitizenRegistered');
    await page.waitForFunction(
      (seq) => [...document.querySelectorAll('#entries tr')].some((row: any) => row.cells[0].textContent === String(seq) && row.cells[2].textContent === 'CitizenRegistered'),
      { timeout: 5_000 },
      entry.seq,
    );
    expect(await page.evaluate(() => (window as any).__sameDocument)).toBe(true);
    expect(await noted(page)).toEqual([]);
    await page.close();
  });

  it('every page answers with the safety headers, sets no cookie, and refuses writes', async () => {
    for (const [name, path] of Object.entries(pages)) {
      const res = await fetch(base + path);
      expect([name, res.status]).toEqual([name, name === 'notFound' ? 404 : 200]);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = res.headers.get('content-security-policy')!;
      for (const directive of ["script-src 'self'", "style-src 'self'", "img-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"]) {
        expect(csp).toContain(directive);
      }
      expect(csp).not.toContain('unsafe');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    for (const [name, path] of Object.entries(missing)) {
      const res = await fetch(base + path);
      expect([name, res.status, res.headers.get('content-type')]).toEqual([name, 404, expect.stringMatching(/^text\/html/)]);
    }
    // An address the server cannot even decode is a page that says so, in the same headers, not a JSON envelope.
    const malformed = await fetch(base + '/a/%E0%A4%A');
    expect([malformed.status, malformed.headers.get('content-type'), malformed.headers.get('content-security-policy')]).toEqual([400, expect.stringMatching(/^text\/html/), expect.any(String)]);
    expect(await malformed.text()).toContain('invalid_request');
    const write = await fetch(base + '/', { method: 'POST' });
    expect(write.status).toBe(405);
    expect(write.headers.get('allow')).toBe('GET, HEAD');
  });

  const NAMES = ['front', 'thread', 'leaderboard', 'tokens', 'token', 'agent', 'bounties', 'bounty', 'ledger', 'notFound'];

  it.each(NAMES)('%s: hostile text stays text, axe finds nothing serious, and 390 px needs no horizontal scroll', async (name) => {
    const { page, dialogs, errors } = await openPage(browser, base + pages[name]!, 390);
    const text = await page.$eval('main', (main) => main.textContent ?? '');
    const shown = { front: Object.values(XSS), thread: [XSS.img, XSS.svg, XSS.breakout], token: [COIN.name, COIN.symbol, COIN.description, COIN.twitter, XSS.img], agent: [BIO], bounty: Object.values(BOUNTY) }[
      name as 'front'
    ];
    for (const payload of shown ?? []) expect(text).toContain(payload);
    const injected = await page.evaluate(() => ({
      handlers: [...document.querySelectorAll('*')].flatMap((el) => [...el.attributes].filter((a) => /^on/i.test(a.name)).map((a) => `${el.tagName}[${a.name}]`)),
      scriptUrls: [...document.querySelectorAll('[href],[src]')].map((el) => el.getAttribute('href') ?? el.getAttribute('src') ?? '').filter((u) => /^\s*javascript:/i.test(u)),
      foreign: [...document.querySelectorAll('main script, main iframe, main svg, main img:not(.coinhead img)')].map((el) => el.tagName),
    }));
    expect(injected).toEqual({ handlers: [], scriptUrls: [], foreign: [] });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await screenshot(page, `${name}-390`);
    expect(await axeViolations(page)).toEqual([]);
    await page.setViewport({ width: 1280, height: 900 });
    await screenshot(page, `${name}-1280`);
    expect({ noted: await noted(page), dialogs, errors }).toEqual({ noted: [], dialogs: [], errors: [] });
    await page.close();
  });
});
