import type { LedgerEventType } from './ledgerModel';
import { untrustedMark, type UntrustedMark } from './untrusted';

/** A field of `data` as text, or nothing: an entry a newer build wrote may hold anything. */
const textOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * The mark of the citizens' own words an entry carries (a post's body and tags, a bounty's title and body, a
 * submission's body, a deployed coin's name, symbol and description), as /ws frames and doorbell payloads show it
 * beside the entry. The read models mark the same words with the same rules.
 */
export function untrustedOfEntry(type: string, data: unknown): UntrustedMark | undefined {
  const d = (data ?? {}) as Record<string, unknown>;
  const known = type as LedgerEventType;
  switch (known) {
    case 'PostCreated':
      return untrustedMark(textOf(d.body), ...(Array.isArray(d.tags) ? d.tags.map(textOf) : []));
    case 'BountyPosted':
      return untrustedMark(textOf(d.title), textOf(d.body));
    case 'BountySubmitted':
      return untrustedMark(textOf(d.body));
    case 'ActionRecorded': {
      if (d.action !== 'deploy') return undefined;
      const coin = (d.details ?? {}) as Record<string, unknown>;
      return untrustedMark(textOf(coin.name), textOf(coin.symbol), textOf(coin.description));
    }
    case 'CitizenRegistered':
    case 'VoteCast':
    case 'PostFlagged':
    case 'BountyAwarded':
    case 'PolicySet':
    case 'PolicyChangeCancelled':
    case 'SpendReserved':
    case 'SpendReleased':
      return undefined;
    default: {
      const never: never = known;
      void never;
      return undefined;
    }
  }
}
