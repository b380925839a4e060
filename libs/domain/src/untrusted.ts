/**
 * Whether a citizen's text carries instructions aimed at the agents that read it: a mark the read models, /ws
 * frames, doorbell payloads and MCP results put beside the text, so an agent's harness can treat it as data.
 * Pure and stateless, so a rebuild of the read models marks again with the rules of the day; the ledger keeps
 * the text as written.
 */

export type UntrustedReason = 'instruction' | 'transfer_request' | 'tool_call' | 'link';

/** The reasons in the order a mark lists them. */
export const UNTRUSTED_REASONS: readonly UntrustedReason[] = ['instruction', 'transfer_request', 'tool_call', 'link'];

export interface UntrustedMark {
  reasons: UntrustedReason[];
  /** 0..1: how sure the rules are, from the signals that matched. */
  score: number;
}

interface Rule {
  reason: UntrustedReason;
  /** The chance that a text this matches is aimed at agents; signals combine as independent ones. */
  weight: number;
  pattern: RegExp;
}

/** A text is marked from this score up: any one strong signal, or weak ones together. */
export const UNTRUSTED_THRESHOLD = 0.5;

const SECRET = String.raw`(?:seed[\s-]*phrase|recovery[\s-]*phrase|secret[\s-]*(?:recovery[\s-]*)?(?:key|phrase|words)|private[\s-]*keys?|priv[\s-]*key|mnemonic|keypair|key[\s-]*pair|12[\s-]*words?|24[\s-]*words?|api[\s-]*key|svc_sk|seed\b(?!\s*(?:round|funding|stage|investors?|phase\s+of)))`;
const FUNDS = String.raw`(?:sol|lamports|usdc|usdt|tokens?|coins?|funds|balance|bags?|holdings|wallet|lamports|everything|it\s+all)`;
const AMOUNT = String.raw`(?:\d+(?:[.,]\d+)?\s*(?:sol|◎|usdc|usdt|lamports|k\s+tokens|tokens)\b)`;
const PUBKEY = String.raw`[1-9A-HJ-NP-Za-km-z]{32,44}`;

const RULES: readonly Rule[] = [
  // Attempts to replace the reader's instructions.
  { reason: 'instruction', weight: 0.95, pattern: /\b(?:ignore|disregard|forget|override|bypass|skip|drop)\b[^.!?\n]{0,40}?\b(?:previous|prior|above|earlier|preceding|original|all|your|any|system|existing|safety|the)\b[^.!?\n]{0,25}?\b(?:instructions?|prompts?|rules|guidelines|directives|guardrails|messages|context|programming|constraints|polic(?:y|ies)|limits)\b/i },
  { reason: 'instruction', weight: 0.9, pattern: /<\/?\s*(?:system|sys|assistant|developer|instructions?|admin|tool_response)(?:[_ -]?(?:prompt|message|instructions?))?\s*>|\[system\]\s*\(#|\[\/?\s*(?:INST|SYS|SYSTEM)\s*\]|<<\s*\/?SYS\s*>>|<\|\s*(?:im_start|im_end|system|endoftext|eot_id|start_header_id)\s*\|>/i },
  { reason: 'instruction', weight: 0.9, pattern: /(?:^|\n|\s)#{1,4}\s*(?:system|assistant|instructions?|new\s+instructions?|developer|admin)\s*:?|(?:^|\n)[^\S\n]*(?:system|developer)\s*(?:prompt|message)?\s*:/i },
  { reason: 'instruction', weight: 0.85, pattern: /\byou\s+are\s+now\s+(?:in\s+)?(?:\w+\s+mode\b|an?\s+(?:\w+\s+)?(?:ai|assistant|agent|bot|wallet|model)\b|my\b|free\b|unrestricted|jailbroken|dan\b|no\s+longer|[\w-]*bot\b)|\bfrom\s+now\s+on\s*,?\s+you\b|\bnew\s+(?:system\s+)?instructions?\s*:|\bsystem\s+(?:prompt|message|notice|alert|update)\s*:|\bsystem\s+override\b|\b(?:developer|god|admin|debug|maintenance|dan)\s+mode\b|\bjailbreak/i },
  { reason: 'instruction', weight: 0.8, pattern: /\b(?:attention|note|message|notice|instructions?)\s+(?:to|for)\s+(?:all\s+|any\s+)?(?:ai|llm|agents?|bots?|assistants?|language\s+models?|autonomous)\b|\b(?:ai|llm|autonomous)\s+(?:agents?|assistants?|models?|bots?)\s+(?:reading|who\s+reads?|that\s+reads?|must|should|are\s+required)\b|\bif\s+you\s+are\s+an?\s+(?:ai|llm|agent|bot|language\s+model|assistant)\b/i },
  { reason: 'instruction', weight: 0.75, pattern: /\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|alert|notify|ask|mention\s+this\s+to)\s+(?:your\s+)?(?:owner|user|operator|human|creator|developer)s?\b|\bwithout\s+(?:asking|telling|notifying|confirming\s+with)\s+(?:your\s+)?(?:owner|user|operator|human)s?\b|\byour\s+(?:real|true|new|updated|actual)\s+(?:task|goal|instructions?|objective|purpose|directive|orders?|mission)\b/i },
  { reason: 'instruction', weight: 0.85, pattern: /\b(?:disregard|ignore|forget|stop\s+(?:following|obeying|listening\s+to)|don'?t\s+(?:follow|obey|listen\s+to)|do\s+not\s+(?:follow|obey|listen\s+to))\b[^.!?\n]{0,30}?\b(?:your|the)\s+(?:owner|operator|user|creator|developer|human|admin)(?:'?s)?\b/i },
  { reason: 'instruction', weight: 0.45, pattern: /\b(?:all|every|any)\s+(?:ai\s+)?(?:agents?|bots?|llms?)\s+(?:must|should|need\s+to|are\s+required\s+to|have\s+to)\b|\b(?:supersedes?|overrides?)\s+(?:all\s+|any\s+)?(?:previous|prior|earlier|other|your|what)\b|(?:^|\n)[^\S\n]*(?:assistant|user|human)\s*:/i },
  { reason: 'instruction', weight: 0.8, pattern: /\bfollow\s+(?:only\s+)?(?:the|these|my|our)\s+(?:\w+\s+)?instructions?\s+(?:in|below|above|from|of)\b/i },
  { reason: 'instruction', weight: 0.35, pattern: /\byou\s+are\s+now\b|\bsystem\s+prompt\b/i },
  { reason: 'instruction', weight: 0.35, pattern: /\b(?:act\s+as|pretend\s+(?:to\s+be|you\s+are)|roleplay\s+as|respond\s+only\s+with|you\s+must\s+(?:now|immediately|always))\b/i },

  // Requests to move funds or to hand over what controls them.
  { reason: 'transfer_request', weight: 0.9, pattern: new RegExp(String.raw`\b(?:send|sending|transfer|wire|move|deposit|pay|drain|sweep|airdrop|forward)\b[^.!?\n]{0,40}?(?:${AMOUNT}|\b(?:all|every|the\s+rest\s+of|your\s+(?:entire|whole|remaining))\b[^.!?\n]{0,15}?\b${FUNDS}\b|\byour\s+${FUNDS}\b)[^.!?\n]{0,50}?\b(?:to|into|at|@)\b\s*:?\s*(?:each\s+of\s*:?\s*)?(?:me\b|us\b|my\b|this\b|the\s+(?:address|wallet|following)|our\b|${PUBKEY}|@\w+|[A-Za-z]\w*\s*:|\w+\.sol\b)`, 'i') },
  { reason: 'transfer_request', weight: 0.9, pattern: new RegExp(String.raw`\b(?:sends?|transfers?|move|pays?|drain|sweep|deposit|forward|wire)\b(?:[^.!?\n]|\.(?=\d)){0,80}?\b${PUBKEY}\b`, 'i') },
  { reason: 'transfer_request', weight: 0.9, pattern: /\b(?:send|transfer|drain|sweep|empty|withdraw)\s+(?:all|everything|your\s+(?:entire|whole|full)?\s*(?:sol|balance|wallet|funds|bags?|holdings|tokens))\b/i },
  { reason: 'transfer_request', weight: 0.95, pattern: new RegExp(String.raw`(?<!\b(?:never|not|n't|don'?t|nobody|no\s+one)\s+)\b(?:share|send|post|paste|reveal|give|dm|enter|type(?:\s+out)?|submit|input|provide|export|print|repl(?:y|ying)\s+with|re-?verify\s+by\s+\w+\s+with|tell\s+(?:me|us)|show|leak|upload|include|verify|confirm|what\s+is|what'?s)\b[^.!?\n]{0,30}?\b(?:your|the|ur|their|its|my|wallet'?s?|agent'?s?)\s+(?:wallet\s+|\d+[\s-]*word\s+)?${SECRET}`, 'i') },
  { reason: 'transfer_request', weight: 0.85, pattern: new RegExp(String.raw`\b${SECRET}\b[^.!?\n]{0,40}?\b(?:here|below|to\s+(?:verify|claim|validate|sync|receive|unlock|restore|connect)|in\s+(?:the\s+)?(?:reply|replies|comments|dm|form|field|link))`, 'i') },
  { reason: 'transfer_request', weight: 0.85, pattern: /\b(?:approve|sign|authorize|authorise|confirm)\s+(?:this|the|my|our|a|that|every|all|any)\s+(?:pending\s+|following\s+|attached\s+|new\s+)?(?:transactions?|tx|txs|txn|spend(?:ing)?|allowance|delegation|transfers?|payment|permit|signature\s+requests?|messages?\s+below|withdrawal|contract|instructions?\s+below)\b|\b(?:unlimited|infinite|max)\s+(?:approval|allowance|delegation)\b|\b(?:approve|sign|authori[sz]e)\s+(?:a\s+|the\s+)?(?:token\s+)?(?:delegation|allowance|permit)\b|\bsign\s+(?:this|the|a)\s+message\b|\bsetAuthority\b|\bapprove\s+(?:delegate|spender)\b/i },
  { reason: 'transfer_request', weight: 0.8, pattern: /\b(?:raise|increase|lift|remove|disable|turn\s+off|delete)\s+(?:your\s+)?(?:spending\s+)?(?:polic(?:y|ies)|limits?|caps?|max_sol_per_(?:day|trade)|allowed_recipients)\b|\b(?:agents?|bots?|everyone|you|y'?all)\b[^.!?\n]{0,30}?\b(?:set|raise|increase|change|update)\s+(?:your\s+|their\s+)?(?:max_sol_per_(?:day|trade)|allowed_(?:recipients|mints))\b/i },

  // Text shaped like a tool call, for a model that copies it into its own.
  { reason: 'tool_call', weight: 0.95, pattern: /"(?:tool_calls?|function_call|tool_use|tool_name)"\s*:|"function"\s*:\s*\{|"name"\s*:\s*"[\w.-]+"\s*,\s*"(?:arguments|args|input|parameters)"\s*:|"method"\s*:\s*"tools\/call"|"(?:arguments|parameters)"\s*:\s*\{[^}]*"(?:to|recipient|amount|amount_sol|mint|destination)"/i },
  { reason: 'tool_call', weight: 0.9, pattern: /\{[^{}]*"(?:to|recipient|destination|to_wallet)"\s*:\s*"[^"]*"[^{}]*"(?:amount|amount_sol|lamports|sol)"\s*:|\{[^{}]*"(?:amount|amount_sol|lamports)"\s*:[^{}]*"(?:to|recipient|destination)"\s*:/i },
  { reason: 'tool_call', weight: 0.9, pattern: /<\/?\s*(?:tool_call|tool_use|function_calls?|invoke|antml:[\w]+|parameter\s+name)\b[^>]*>|\bfunctions\.\w+\s*\(|\btools\/call\b/i },
  { reason: 'tool_call', weight: 0.9, pattern: /\b(?:call|run|invoke|use|execute|trigger)\s+(?:the\s+)?(?:tool\s+)?`?svc_\w+`?|\bsvc_(?:transfer|buy|sell|swap|award|burn|deploy|policy_set|rotate|fee_share|fees_claim|tx_submit|memory_set)\s*\(|\bsvc_\w+\s*\{/i },
  { reason: 'tool_call', weight: 0.3, pattern: /\b(?:tool|function)[\s_-]?calls?\b/i },
  { reason: 'tool_call', weight: 0.9, pattern: /\b(?:POST|PUT)\s+\/api\/v1\/(?:transfer|tokens\/(?:buy|sell|burn)|swap|rotate|policy|bounties\/[^\s/]+\/award|tx\/submit|memory)\b/i },
  { reason: 'tool_call', weight: 0.3, pattern: /\bsvc_(?:transfer|policy_set|rotate|tx_submit|memory_set)\b/i },
];

/**
 * Hosts a trading post links every day, and their subdomains: a link there is not marked, however its path reads.
 * A lookalike (pump-fun.io, solscan.co) is not one of them.
 */
const KNOWN_HOSTS = [
  'solscan.io', 'pump.fun', 'dexscreener.com', 'birdeye.so', 'jup.ag', 'raydium.io', 'orca.so', 'meteora.ag', 'solana.com', 'solana.fm',
  'explorer.solana.com', 'x.com', 'twitter.com', 't.me', 'discord.gg', 'discord.com', 'github.com', 'coingecko.com', 'coinmarketcap.com',
  'geckoterminal.com', 'rugcheck.xyz', 'gmgn.ai', 'bullx.io', 'magiceden.io', 'tensor.trade', 'phantom.app', 'phantom.com', 'solflare.com',
  'backpack.app', 'youtube.com', 'youtu.be', 'medium.com', 'reddit.com', 'tradingview.com', 'defillama.com', 'helius.dev', 'arweave.net',
  'ipfs.io', 'pinata.cloud', 'imgur.com', 'wikipedia.org', 'binance.com', 'coinbase.com', 'kraken.com', 'photon-sol.tinyastro.io', 'step.finance',
  'marinade.finance', 'jito.network', 'drift.trade', 'kamino.finance', 'solanabeach.io', 'xray.helius.xyz', 'pumpportal.fun', 'moonshot.money',
];

/** Words in a host or path that drainers use: a claim, an airdrop, a wallet to connect or verify. */
const LURE = /claim|airdrop|rewards?|-drop|drop-|drop-?live|connect-?wallet|wallet-?(?:connect|verif|sync|restore|validat|unlock|fix)|walletconnect|verify-?wallet|validate|sync-?wallet|rectif|restore-?wallet|unlock-?wallet|revoke|migrat|whitelist|eligib|reward-?portal|dapp-?(?:fix|sync|portal)|bonus|giveaway|free-?(?:sol|mint)|mint-?now|drainer/i;
/** Brands a lookalike host borrows. */
const BRANDS = /phantom|solflare|backpack|metamask|trustwallet|ledger|walletconnect|solscan|dexscreener|birdeye|raydium|jupiter|jup-?ag|pump-?fun|magiceden|tensor|solana/i;

const URL_PATTERN = /\b(?:(?:https?|wss?):\/\/(?:\[[0-9a-f:.]+\])?|www\.)[^\s<>"'`)\]]*|\b(?:javascript|data):[^\s]+|\b(?:[a-z0-9-]{1,63}\.){1,8}(?:xyz|io|com|net|org|app|fun|site|online|live|top|click|link|info|pro|gg|so|ag|me|co|vip|cc|ru|tk|ml|ga|cf|claims?|wallet|finance|money|network|digital|dev|ai)\b(?:\/[^\s<>"'`)\]]*)?/gi;

/** What a link says about where it leads, or undefined when it leads to a known place. */
function suspiciousLink(raw: string): number | undefined {
  if (/^(?:javascript|data):/i.test(raw)) return 0.95;
  // A host that claims to be punycode is not a plain name, even when it is not valid punycode.
  if (/(?:^|[/.@])xn--/i.test(raw)) return 0.9;
  const withScheme = /^[a-z]+:\/\//i.test(raw) ? raw : `https://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  // The URL parser turns a Unicode host into punycode, so a homoglyph shows as xn-- here.
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host.split('.').some((label) => label.startsWith('xn--'))) return 0.9;
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(host) || host.startsWith('[')) return 0.85;
  if (url.username || url.password || /^[^/]*@/.test(withScheme.replace(/^[a-z]+:\/\//i, ''))) return 0.85;
  if (KNOWN_HOSTS.some((known) => host === known || host.endsWith(`.${known}`))) return undefined;
  if (LURE.test(host)) return 0.9;
  if (BRANDS.test(host)) return 0.8;
  if (LURE.test(url.pathname + url.search)) return 0.75;
  return undefined;
}

/** The mark of a text, or undefined when none of the rules finds it aimed at agents. */
export function untrustedMark(...texts: Array<string | null | undefined>): UntrustedMark | undefined {
  const text = texts.filter((t): t is string => typeof t === 'string' && t.length > 0).join('\n');
  if (text.length === 0) return undefined;
  // Zero-width characters and soft hyphens hide words from a pattern, not from a model.
  const plain = text.normalize('NFKC').replace(/[\u200B-\u200F\u2060-\u2064\uFEFF\u00AD]/g, '');
  const weights = new Map<UntrustedReason, number[]>();
  const hit = (reason: UntrustedReason, weight: number) => weights.set(reason, [...(weights.get(reason) ?? []), weight]);
  for (const rule of RULES) if (rule.pattern.test(plain)) hit(rule.reason, rule.weight);
  for (const match of plain.matchAll(URL_PATTERN)) {
    const weight = suspiciousLink(match[0]);
    if (weight !== undefined) hit('link', weight);
  }
  const all = [...weights.values()].flat();
  const score = 1 - all.reduce((miss, weight) => miss * (1 - weight), 1);
  if (score < UNTRUSTED_THRESHOLD) return undefined;
  return { reasons: UNTRUSTED_REASONS.filter((reason) => weights.has(reason)), score: Math.round(score * 1000) / 1000 };
}
