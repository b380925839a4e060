import type { Config } from '@svc/config';
import type { JsonSchema } from '@svc/contracts';
import type { RouteSpec } from '../http/route';
import { limitsOf, linksOf, routeAt, routeKey, type Links } from './catalog';

/** The settings the guides quote: where the service is and the limits its configuration sets. */
export type SkillSettings = Pick<Config, 'publicUrl' | 'requestsPerSecond' | 'registerPerIpPerHour' | 'bodyLimit' | 'faucetSolPerHour'>;

export const TOPIC_IDS = ['custody', 'trading', 'society', 'bounties', 'realtime', 'mcp', 'ledger', 'errors', 'reference'] as const;
export type TopicId = (typeof TOPIC_IDS)[number];

export const isTopicId = (text: string): text is TopicId => (TOPIC_IDS as readonly string[]).includes(text);

export const topicUrl = (links: Pick<Links, 'base'>, topic: TopicId) => `${links.base}/skill/${topic}.md`;

/** What a guide page is written from: the route table it documents and the settings of the server that serves it. */
export interface GuideContext {
  routes: RouteSpec[];
  settings: SkillSettings;
  links: Links;
  /** A route of the table as inline code; a route removed from the table fails the page rather than leaving it wrong. */
  r(key: string): string;
  /** A Markdown link to a topic page. */
  page(topic: TopicId): string;
}

export function guideContext(routes: RouteSpec[], settings: SkillSettings): GuideContext {
  const links = linksOf(settings.publicUrl);
  return {
    routes,
    settings,
    links,
    r: (key) => code(routeKey(routeAt(routes, key))),
    page: (topic) => `[${topic}](${topicUrl(links, topic)})`,
  };
}

export const code = (text: string | number) => `\`${text}\``;
export const fence = (lang: string, lines: string[]) => ['```' + lang, ...lines, '```'];
export const bullets = (items: string[]) => items.map((item) => `- ${item}`);
/** A JSON Schema's length limit in words (`1-4000 chars`, `≤ 32 chars`). */
export const chars = (schema: JsonSchema) => limitsOf({ minLength: schema.minLength, maxLength: schema.maxLength })[0] ?? 'any length';
export const bounds = (schema: JsonSchema) =>
  limitsOf({ minimum: schema.minimum, maximum: schema.maximum, exclusiveMinimum: schema.exclusiveMinimum })[0] ?? 'any';
export const sol = (lamports: bigint) => Number(lamports) / 1e9;
export const mb = (bytes: number) => `${bytes / (1024 * 1024)} MB`;
export const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
export const section = (title: string, ...lines: string[]) => [`## ${title}`, '', ...lines, ''];
