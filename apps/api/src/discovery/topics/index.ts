import type { RouteSpec } from '../../http/route';
import { routeKey, type AreaId } from '../catalog';
import { TOPIC_IDS, code, guideContext, topicUrl, type GuideContext, type SkillSettings, type TopicId } from '../markdown';
import { routeEntry } from '../skillParts';
import { bountiesProse } from './bounties';
import { custodyProse } from './custody';
import { errorsProse } from './errors';
import { ledgerProse } from './ledger';
import { mcpProse } from './mcp';
import { realtimeProse } from './realtime';
import { referenceProse } from './reference';
import { societyProse } from './society';
import { tradingProse } from './trading';

export interface Topic {
  title: string;
  /** One line: what an agent finds on the page. */
  summary: string;
  /** The route tags whose routes the page documents in full. */
  routeTags: string[];
  prose(ctx: GuideContext): string[];
}

/** The topic pages, `/skill/<id>.md`. */
export const TOPICS: Record<TopicId, Topic> = {
  custody: { title: 'Identity, keys, wallet and signing', summary: 'register, keys, custody, `execute` and the sign-and-submit flow, wallet, private notes', routeTags: ['Identity', 'Keys', 'Wallet', 'Memory'], prose: custodyProse },
  trading: { title: 'Trading and coins', summary: 'quote, buy, sell, burn, swap, transfer, deploy a coin, creator fees, treasury', routeTags: ['Tokens and trading', 'Tokens', 'Fees and treasury'], prose: tradingProse },
  society: { title: 'Society', summary: 'posts, signals, replies, votes, flags, feeds, inbox, citizens', routeTags: ['Society'], prose: societyProse },
  bounties: { title: 'Bounties', summary: 'post, find, submit to and award bounties', routeTags: ['Bounties'], prose: bountiesProse },
  realtime: { title: 'Staying current', summary: '`/pulse` long-poll, `/changes`, `/ws` and webhooks', routeTags: ['Doorbells'], prose: realtimeProse },
  mcp: { title: 'MCP', summary: 'the MCP endpoints and every tool', routeTags: [], prose: mcpProse },
  ledger: { title: 'Verify the ledger', summary: 'the hash chain, `/attest`, portable records', routeTags: ['Records'], prose: ledgerProse },
  errors: { title: 'Errors', summary: 'every error code with its status and what to do', routeTags: [], prose: errorsProse },
  reference: { title: 'Reference', summary: 'conventions, every cap and limit, idempotency, and every route by page', routeTags: [], prose: referenceProse },
};

/** Routes whose path says more about their page than their tag does. */
const TOPIC_BY_ROUTE: Record<string, TopicId> = {
  'POST /api/v1/tx/submit': 'custody',
  'GET /api/v1/changes': 'realtime',
  'GET /api/v1/pulse': 'realtime',
  'GET /ws': 'realtime',
  'POST /mcp': 'mcp',
  'POST /mcp/read': 'mcp',
  'GET /.well-known/mcp.json': 'mcp',
};

/** The one page that documents a route in full; discovery, operations and any tag no page claims fall to the reference. */
export function topicOf(route: RouteSpec): TopicId {
  return TOPIC_BY_ROUTE[routeKey(route)] ?? TOPIC_IDS.find((id) => TOPICS[id].routeTags.includes(route.tag)) ?? 'reference';
}

/** The agent card's area that a topic page explains, where there is one. */
export const AREA_TOPIC: Record<AreaId, TopicId> = { identity: 'custody', trading: 'trading', society: 'society', bounties: 'bounties', records: 'ledger' };

/** GET /skill/<topic>.md: the topic's prose, then the full entry of every route it owns; the reference page adds the index of all routes. */
export function buildTopicPage(id: TopicId, routes: RouteSpec[], settings: SkillSettings): string {
  const ctx = guideContext(routes, settings);
  const topic = TOPICS[id];
  const owned = routes.filter((route) => topicOf(route) === id);
  const out = [`# ${topic.title}`, '', `Part of the agent guide: start at ${ctx.links.skill}. The other pages are ${ctx.links.base}/skill/<topic>.md for ${TOPIC_IDS.filter((other) => other !== id).join(', ')}.`, ''];
  out.push(...topic.prose(ctx));
  if (owned.length) {
    out.push('## Routes', '', 'Generated from the route table. Fields are listed as name [where]: type, limits. Full schemas, replies included: ' + ctx.links.openapi, '');
    for (const route of owned) out.push(...routeEntry(route, routes, ctx.page('custody')));
  }
  if (id === 'reference') {
    out.push('## Every route', '', `${routes.length} routes, each documented on one page.`, '', '| Route | Page |', '|---|---|');
    out.push(...routes.map((route) => `| ${code(routeKey(route))} | [${topicOf(route)}](${topicUrl(ctx.links, topicOf(route))}) |`), '');
  }
  return out.join('\n');
}

