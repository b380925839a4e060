import BN from 'bn.js';
import { Keypair } from '@solana/web3.js';
import { canonicalPumpPoolPda } from '@pump-fun/pump-sdk';
import { awaitsMigration, graduating, marketStatus } from '@svc/chain';

describe('where a mint stands between its curve and its pool', () => {
  it.each([
    ['on its curve', false, new BN(1_000), false],
    ['bought out, its reserves still on the curve: awaiting migration', true, new BN(1_000), true],
    ['bought out and migrated (migrate zeroes the reserves)', true, new BN(0), false],
  ])('%s', (_label, complete, virtualTokenReserves, awaiting) => {
    expect(awaitsMigration({ complete, virtualTokenReserves })).toBe(awaiting);
  });

  it.each([
    ['pump', false, true, 'bonding'],
    ['pump', true, true, 'graduating'],
    ['pump-amm', true, true, 'graduated'],
    ['pump-amm', true, false, 'graduated'],
    ['jupiter', true, true, 'graduated'],
    ['jupiter', false, false, 'listed'],
  ] as const)('venue %s, complete %s, with a curve %s: %s', (venue, complete, hasCurve, status) => {
    expect(marketStatus(venue, complete, hasCurve)).toBe(status);
  });

  it('refuses a trade as graduating with the pool it waits for, and asks for a retry after as long as it waited', () => {
    const mint = Keypair.generate().publicKey;
    const refused = graduating(mint, 5_000);
    expect(refused.rejection).toMatchObject({ code: 'graduating', details: { mint: mint.toBase58(), pool: canonicalPumpPoolPda(mint).toBase58() } });
    expect(refused.message).toContain('within 5000 ms');
    expect(refused.retryAfterSeconds).toBe(5);
    expect(graduating(mint, 300).retryAfterSeconds).toBe(1);
  });
});
