// Where a doorbell may point: checked by every transport that registers one, and again by the workers
// on the address a name resolves to at each delivery.
import { BlockList, isIP } from 'node:net';

/** Address ranges a doorbell may never reach (IANA special-purpose registries, IPv4 and IPv6), each with its name. */
const REFUSED: Array<[string, string]> = [
  ['0.0.0.0/8', 'unspecified ("this network")'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata lives here)'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved (and broadcast)'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible'],
  ['::ffff:0:0/96', 'IPv4-mapped'],
  ['64:ff9b::/96', 'NAT64'],
  ['64:ff9b:1::/48', 'NAT64'],
  ['100::/64', 'discard-only'],
  ['2001::/23', 'IETF protocol assignments (Teredo included)'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['fc00::/7', 'unique local (private; fd00:ec2::254 is cloud metadata)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
];

const LOOPBACK_V4 = new BlockList();
LOOPBACK_V4.addSubnet('127.0.0.0', 8, 'ipv4');

/** 127.0.0.0/8 and ::1 as such: an IPv4-mapped form (which BlockList would match too) stays refused. */
function isLoopback(address: string, version: number): boolean {
  return version === 4 ? LOOPBACK_V4.check(address, 'ipv4') : address === '::1';
}

const RANGES = REFUSED.map(([cidr, what]) => {
  const [network, prefix] = cidr.split('/') as [string, string];
  const family = isIP(network) === 4 ? ('ipv4' as const) : ('ipv6' as const);
  const list = new BlockList();
  list.addSubnet(network, Number(prefix), family);
  return { family, what, list };
});

/**
 * Why a doorbell may not call this IP address, or undefined when it may. `allowLoopback` (tests) lets
 * 127.0.0.0/8 and ::1 through; private, link-local and metadata addresses stay refused.
 */
export function refusedAddress(address: string, allowLoopback: boolean): string | undefined {
  const version = isIP(address);
  if (version === 0) return 'not an IP address';
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (allowLoopback && isLoopback(address, version)) return undefined;
  const hit = RANGES.find((range) => range.family === family && range.list.check(address, family));
  return hit ? `${address} is a ${hit.what} address` : undefined;
}

const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.lan'];

export type UrlCheck = { ok: true; url: string } | { ok: false; problem: string };

/**
 * The registration-time check of a doorbell URL: https, no credentials, and a host that is not a
 * non-public address or name. Answers the normalized URL (WHATWG), which is what is stored and compared.
 * Names are checked again when delivering, on the address they resolve to then.
 */
export function checkDoorbellUrl(raw: string, options: { allowLoopback: boolean }): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: 'url must be an absolute https URL, e.g. https://example.com/hook' };
  }
  if (url.protocol !== 'https:') return { ok: false, problem: `url must use https, not ${url.protocol.replace(/:$/, '')}` };
  if (url.username || url.password) return { ok: false, problem: 'url must not carry credentials (user:password@); sign deliveries with a secret instead' };
  if (url.hash) return { ok: false, problem: 'url must not have a #fragment' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  if (!host) return { ok: false, problem: 'url must name a host' };
  if (url.port === '0') return { ok: false, problem: 'url must not use port 0: give the port the receiver listens on, or none for 443' };
  if (isIP(host)) {
    const refused = refusedAddress(host, options.allowLoopback);
    return refused ? { ok: false, problem: `url must reach a public address: ${refused}` } : { ok: true, url: url.href };
  }
  const localName = host === 'localhost' || LOCAL_SUFFIXES.some((suffix) => host.endsWith(suffix)) || host === 'metadata.google.internal';
  const loopbackName = host === 'localhost' || host.endsWith('.localhost');
  if (localName && !(options.allowLoopback && loopbackName)) return { ok: false, problem: `url must reach a public host: ${host} is a local name` };
  if (!host.includes('.') && !loopbackName) return { ok: false, problem: `url must name a fully qualified public host, not ${host}` };
  return { ok: true, url: url.href };
}
