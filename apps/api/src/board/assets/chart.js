// The coin page's chart and figures: candles from /api/v1/tokens/{mint}/candles, refetched (with the
// figures) whenever /ws reports a trade of this coin.
import { CandlestickSeries, createChart } from '/assets/vendor/lightweight-charts.mjs';

const mint = document.body.dataset.mint;
const holder = document.getElementById('chart');
const TRADES = new Set(['buy', 'sell', 'swap', 'deploy', 'buyback']);

const chart = createChart(holder, { autoSize: true, layout: { attributionLogo: false }, timeScale: { timeVisible: true } });
const series = chart.addSeries(CandlestickSeries, { priceFormat: { type: 'price', precision: 10, minMove: 1e-10 } });

function num(value, digits = 4) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  return Math.abs(value) >= 1 || value === 0 ? value.toFixed(digits) : value.toPrecision(digits);
}

function usd(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  // toFixed and a regex, not toLocaleString: ICU formatting costs more than the rest of a row.
  return Math.abs(value) >= 0.01 || value === 0 ? `$${value.toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}` : `$${value.toPrecision(3)}`;
}

function set(id, text) {
  const node = document.getElementById(id);
  if (node) node.textContent = text;
}

async function readJson(path) {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  return res.ok ? res.json() : null;
}

/** A 404 (no candles route yet) or an outage leaves the chart empty rather than failing the page. */
async function loadCandles() {
  const reply = await readJson(`/api/v1/tokens/${encodeURIComponent(mint)}/candles?interval=1m&limit=500`).catch(() => null);
  const candles = Array.isArray(reply?.candles) ? reply.candles : [];
  series.setData(candles.map((c) => ({ time: c.t, open: c.open, high: c.high, low: c.low, close: c.close })));
  holder.dataset.candles = String(candles.length);
  holder.dataset.lastClose = candles.length ? String(candles[candles.length - 1].close) : '';
  holder.dataset.trades = String(candles.reduce((sum, c) => sum + (c.trades ?? 0), 0));
}

async function loadFigures() {
  const coin = await readJson(`/api/v1/tokens/${encodeURIComponent(mint)}`).catch(() => null);
  if (!coin) return;
  set('price_sol', num(coin.price_sol, 6));
  set('price_usd', usd(coin.price_usd));
  set('market_cap_usd', usd(coin.market_cap_usd));
  if (typeof coin.progress === 'number') set('progress', `${num(coin.progress * 100, 1)}%`);
  if (coin.trades) {
    set('trades', `${coin.trades.buys} buys, ${coin.trades.sells} sells`);
    set('buy_volume', num(coin.trades.buy_volume_sol));
  }
}

document.addEventListener('board:frame', (event) => {
  const frame = event.detail;
  if (frame.kind !== 'action' || !TRADES.has(frame.data?.action) || frame.data?.details?.mint !== mint) return;
  void Promise.all([loadFigures(), loadCandles()]);
});

void loadCandles();
