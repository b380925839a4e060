import { generateKeyPairSync } from 'node:crypto';
import bs58 from 'bs58';
import { PublicKey } from '@solana/web3.js';

export interface GeneratedWallet {
  publicKey: string;
  /** 64 bytes: the ed25519 seed followed by the public key (Solana's keypair format). */
  secretKey: Uint8Array;
}

/** A fresh ed25519 keypair from Node's native crypto. */
export function generateWallet(): GeneratedWallet {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519', {
    privateKeyEncoding: { format: 'der', type: 'pkcs8' },
    publicKeyEncoding: { format: 'der', type: 'spki' },
  });
  // Both DER encodings of an ed25519 key end with its 32 raw bytes.
  const seed = privateKey.subarray(privateKey.length - 32);
  const pub = publicKey.subarray(publicKey.length - 32);
  return { publicKey: bs58.encode(pub), secretKey: new Uint8Array(Buffer.concat([seed, pub])) };
}

/** A base58 string of 32 bytes that is a point on the ed25519 curve (a key someone can sign with). */
export function isWalletPublicKey(value: string): boolean {
  try {
    const bytes = bs58.decode(value);
    return bytes.length === 32 && PublicKey.isOnCurve(bytes);
  } catch {
    return false;
  }
}
