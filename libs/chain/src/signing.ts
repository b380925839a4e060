import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { Keypair, type VersionedTransaction } from '@solana/web3.js';

/**
 * web3.js v1 signs and derives public keys with @noble's JavaScript ed25519: about a millisecond of the event
 * loop for each, on every signed action. Node's own ed25519 (OpenSSL) does the same in tens of microseconds.
 * The native key of each Keypair is made once and kept beside it.
 */
const nativeKeys = new WeakMap<Keypair, KeyObject>();

/**
 * From a JWK: OpenSSL takes the raw seed as it is, about a tenth of the time its PKCS#8 decoder takes (0.06 ms
 * against 0.6 ms, on every signed action). It derives the public half from the seed itself: `x` is required by
 * node's JWK import but not used for a private key, which is what lets keypairFromSecret check it.
 */
function nativeKeyOf(seed: Uint8Array, publicKey: Uint8Array): KeyObject {
  return createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(seed).toString('base64url'), x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
}

/** The Keypair of an unsealed 64-byte ed25519 secret (seed then public key), checked for consistency. */
export function keypairFromSecret(secret: Uint8Array): Keypair {
  if (secret.length !== 64) throw new Error('a wallet secret is 64 bytes');
  const key = nativeKeyOf(secret.subarray(0, 32), secret.subarray(32));
  const derived = key.export({ format: 'jwk' }).x;
  if (derived !== Buffer.from(secret.subarray(32)).toString('base64url')) throw new Error("the wallet secret is invalid: its public half is not the seed's");
  const keypair = Keypair.fromSecretKey(secret, { skipValidation: true });
  nativeKeys.set(keypair, key);
  return keypair;
}

/** Adds each signer's signature over the message, keeping any signature already there (as web3.js's `sign`). */
export function signWith(transaction: VersionedTransaction, signers: Keypair[]): void {
  const message = transaction.message.serialize();
  for (const signer of signers) {
    let key = nativeKeys.get(signer);
    if (!key) {
      key = nativeKeyOf(signer.secretKey.subarray(0, 32), signer.publicKey.toBytes());
      nativeKeys.set(signer, key);
    }
    // A plain Uint8Array, as web3.js keeps its signatures (a Buffer compares unequal to one).
    transaction.addSignature(signer.publicKey, new Uint8Array(sign(null, message, key)));
  }
}
