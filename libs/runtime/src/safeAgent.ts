import dns from 'node:dns';
import fs from 'node:fs';
import type https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import tls from 'node:tls';
import { refusedAddress } from '@svc/contracts';

/** For the request-filtering agent: with the switch on, loopback only (`::1` first: see createSafeHttpsAgent). */
export const LOOPBACK_ALLOW_LIST = ['::1', '127.0.0.0/8'];

/** The error code of a lookup refused by guardedLookup. */
export const REFUSED_ADDRESS_CODE = 'EREFUSEDADDRESS';

/**
 * Resolves like `dns.lookup` and refuses any answer in a refused range. Sits under the request-filtering
 * agent's own check of the resolved address (DNS rebinding), so a connection needs both to agree.
 */
export function guardedLookup(resolve: LookupFunction, allowLoopback: boolean): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void) => {
    resolve(hostname, options, (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => {
      if (error) return callback(error);
      const answers = Array.isArray(address) ? address : [{ address, family: family ?? isIP(address) }];
      for (const answer of answers) {
        const refused = refusedAddress(answer.address, allowLoopback);
        if (refused) return callback(Object.assign(new Error(`${hostname} resolves to a refused address: ${refused}`), { code: REFUSED_ADDRESS_CODE }));
      }
      if (Array.isArray(address)) callback(null, address);
      else callback(null, address, family);
    });
  }) as LookupFunction;
}

export interface SafeAgentOptions {
  /** Loopback addresses may be called (tests only); private, link-local and metadata addresses stay refused. */
  allowLoopback: boolean;
  /** PEM file of an extra trusted CA. */
  caFile?: string;
  /** Stands in for DNS (tests); the resolved addresses are filtered all the same. */
  lookup?: LookupFunction;
  /** Keep sockets open between requests (default true). */
  keepAlive?: boolean;
}

/**
 * An https.Agent for every request to a URL a citizen chose (doorbells, token images): `request-filtering-agent`
 * refuses, per connection, any resolved address that is not public unicast (with the switch on, loopback is
 * let through, nothing else), and our own lookup guard refuses the same ranges as registration does.
 */
export async function createSafeHttpsAgent(options: SafeAgentOptions): Promise<https.Agent> {
  // An ES module: a dynamic import loads it from this CommonJS code under node and under jest alike.
  const { RequestFilteringHttpsAgent } = await import('request-filtering-agent');
  const extraCa = options.caFile ? fs.readFileSync(options.caFile, 'utf8') : undefined;
  return new RequestFilteringHttpsAgent({
    // No per-host socket limit: the caller's concurrency bounds it, and a request queued for a socket
    // would spend its timeout waiting.
    keepAlive: options.keepAlive ?? true,
    ...(extraCa ? { ca: [...tls.rootCertificates, extraCa] } : {}),
    lookup: guardedLookup(options.lookup ?? (dns.lookup as LookupFunction), options.allowLoopback),
    allowPrivateIPAddress: false,
    allowMetaIPAddress: false,
    // The agent tries each entry in order and warns when an IPv6 target meets an IPv4 range; `::1` first
    // keeps the loopback case quiet.
    allowIPAddressList: options.allowLoopback ? LOOPBACK_ALLOW_LIST : [],
  });
}

/** Our lookup guard's refusal, or request-filtering-agent's (which carries no code, only its wording). */
export function isAddressRefusal(error: Error): boolean {
  return (error as NodeJS.ErrnoException).code === REFUSED_ADDRESS_CODE || /^DNS lookup .* is not allowed\b/.test(error.message);
}
