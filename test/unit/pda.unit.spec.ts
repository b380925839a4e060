import { Keypair, PublicKey } from '@solana/web3.js';
import { rememberProgramAddresses } from '@svc/chain';

describe('remembered program-derived addresses', () => {
  const program = Keypair.generate().publicKey;
  const seedsOf = (i: number) => [Buffer.from('seed'), Keypair.generate().publicKey.toBuffer(), Buffer.from([i])];

  it('answers what the derivation answers, for new seeds and remembered ones alike', () => {
    const cases = Array.from({ length: 20 }, (_, i) => seedsOf(i));
    // Each address checked against createProgramAddressSync, which the cache does not touch.
    const expected = cases.map((seeds) => {
      for (let bump = 255; bump >= 0; bump--) {
        try {
          return [PublicKey.createProgramAddressSync([...seeds, Buffer.from([bump])], program).toBase58(), bump];
        } catch {
          continue;
        }
      }
      throw new Error('no bump');
    });
    rememberProgramAddresses();
    for (const round of [0, 1]) {
      const got = cases.map((seeds) => {
        const [address, bump] = PublicKey.findProgramAddressSync(seeds, program);
        return [address.toBase58(), bump];
      });
      expect({ round, got }).toEqual({ round, got: expected });
    }
  });

  it('hands each caller its own tuple, so one caller changing it cannot change another’s', () => {
    rememberProgramAddresses();
    const a = PublicKey.findProgramAddressSync([Buffer.from('ab'), Buffer.from('c')], program);
    const again = PublicKey.findProgramAddressSync([Buffer.from('ab'), Buffer.from('c')], program);
    expect(again).not.toBe(a);
    expect(again).toEqual(a);
  });
});
