import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { generateWallet, isWalletPublicKey } from '@svc/vault';

describe('custody wallets', () => {
  it('generates a Solana keypair whose secret key signs for its public key', () => {
    for (let i = 0; i < 20; i++) {
      const wallet = generateWallet();
      expect(wallet.secretKey).toHaveLength(64);
      const keypair = Keypair.fromSecretKey(wallet.secretKey);
      expect(keypair.publicKey.toBase58()).toBe(wallet.publicKey);
      expect(isWalletPublicKey(wallet.publicKey)).toBe(true);
    }
  });

  it('accepts only base58 public keys on the ed25519 curve', () => {
    expect(isWalletPublicKey(bs58.encode(new Uint8Array(31)))).toBe(false);
    expect(isWalletPublicKey('0OIl')).toBe(false);
    expect(isWalletPublicKey('11111111111111111111111111111111111')).toBe(false);
  });
});
