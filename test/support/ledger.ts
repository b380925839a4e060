import type { LedgerEntry } from '@svc/ledger';
import { call } from './http';

/** Every ledger entry, paged through /api/v1/changes as a client catching up would. */
export async function ledgerEntries(base: string): Promise<LedgerEntry[]> {
  const all: LedgerEntry[] = [];
  let after = -1;
  for (;;) {
    const page = await call(base, 'GET', `/api/v1/changes?after=${after}&limit=1000`);
    if (page.status !== 200) throw new Error(`/changes answered ${page.status}: ${JSON.stringify(page.body)}`);
    all.push(...page.body.changes);
    if (!page.body.has_more) return all;
    after = page.body.next_after;
  }
}
