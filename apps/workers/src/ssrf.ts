import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { refusedAddress } from '@svc/contracts';

/** For the request-filtering agent: with the switch on, loopback only (`::1` first: see createDoorbellAgent). */
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
