import bs58 from 'bs58';
import { Keypair, PublicKey } from '@solana/web3.js';
import { rememberBase58Names } from '@svc/chain';

describe('remembered base58 names of keys', () => {
  // Installed once for the file, over a counting encoder, so the test sees how often a name is really computed.
  const encode = PublicKey.prototype.toBase58;
  let computed = 0;
  beforeAll(() => {
    PublicKey.prototype.toBase58 = function (this: PublicKey) {
      computed++;
      return encode.call(this);
    };
    rememberBase58Names();
    rememberBase58Names();
  });

  it('names every key as base58 of its bytes, by each of the ways web3.js names one', () => {
    const keys = [PublicKey.default, ...Array.from({ length: 200 }, () => Keypair.generate().publicKey)];
    for (const round of [0, 1]) {
      for (const key of keys) {
        const name = bs58.encode(key.toBytes());
        expect({ round, names: [key.toBase58(), key.toString(), key.toJSON(), JSON.stringify({ key })] }).toEqual({
          round,
          names: [name, name, name, JSON.stringify({ key: name })],
        });
      }
    }
  });

  it('computes a key’s name once, however often it is asked, and a new key object’s again', () => {
    const key = Keypair.generate().publicKey;
    const before = computed;
    for (let i = 0; i < 5; i++) key.toBase58();
    expect(computed - before).toBe(1);
    const same = new PublicKey(key.toBytes());
    expect(same.toBase58()).toBe(key.toBase58());
    expect(computed - before).toBe(2);
  });
});
