import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LocalChain } from '../chain/localChain';
import { readBody, sendJson } from '../rpc/http';
import type { ExtraRoute } from '../server';
import { JupiterError, invalidRequest } from './errors';
import { parsePriceIds, parseQuoteRequest, parseSwapRequest } from './params';
import { TokenPrice, priceOf } from './price';
import { quote } from './quote';
import { routeLookupTable } from './lookupTable';
import { buildSwap } from './swap';

export interface JupiterOptions {
  /** The USD price of SOL that every other price derives from. */
  solUsd: number;
}

type Handler = (chain: LocalChain, req: IncomingMessage, url: URL) => Promise<unknown>;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const body = await readBody(req);
  if (!body) throw new JupiterError(413, 'INVALID_REQUEST', 'Request body too large');
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw invalidRequest('Failed to parse the request body as JSON');
  }
}

/**
 * Jupiter's Swap API (v1) and Price API (v3) over the local chain, for clients written against api.jup.ag: point
 * their base URL at the localnet's RPC URL. Quotes and swaps route to the pump bonding curve or a PumpSwap pool.
 */
export function jupiterRoutes(options: JupiterOptions): ExtraRoute {
  if (!(options.solUsd > 0)) throw new RangeError('jupiterRoutes needs a positive solUsd');
  const routes: Record<string, { method: 'GET' | 'POST'; handle: Handler }> = {
    '/swap/v1/quote': {
      method: 'GET',
      handle: async (chain, _req, url) => quote(chain, chain.slot, parseQuoteRequest(url.searchParams), Date.now(), Date.now),
    },
    '/swap/v1/swap': {
      method: 'POST',
      handle: async (chain, req) => {
        const request = parseSwapRequest(await readJson(req));
        // A route of more than one leg names more accounts than fit a transaction without the aggregator's table.
        const tables = request.legs.length > 1 && !request.asLegacyTransaction ? [await routeLookupTable(chain)] : [];
        return buildSwap(chain, chain.latestBlockhash(), request, tables);
      },
    },
    '/price/v3': {
      method: 'GET',
      handle: async (chain, _req, url) => {
        const slot = chain.slot;
        const prices: Record<string, TokenPrice> = {};
        for (const mint of parsePriceIds(url.searchParams)) {
          const price = priceOf(chain, mint, options.solUsd, slot);
          if (price) prices[mint.toBase58()] = price;
        }
        return prices;
      },
    },
  };

  return async (chain: LocalChain, req: IncomingMessage, res: ServerResponse, url: URL) => {
    const route = routes[url.pathname];
    if (!route) return false;
    if (req.method !== route.method) {
      res.setHeader('allow', route.method);
      sendJson(res, 405, { error: `Method ${req.method} not allowed; use ${route.method}` });
      return true;
    }
    try {
      sendJson(res, 200, await route.handle(chain, req, url));
    } catch (error) {
      if (!(error instanceof JupiterError)) throw error;
      sendJson(res, error.status, error.toJSON());
    }
    return true;
  };
}
