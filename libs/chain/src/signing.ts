import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { Keypair, type VersionedTransaction } from '@solana/web3.js';

/** The DER of a PKCS#8 ed25519 private key, up to the 32-byte seed that follows it (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * web3.js v1 signs and derives public keys with @noble's JavaScript ed25519: about a millisecond of the event
 * loop for each, on every signed action. Node's own ed25519 (OpenSSL) does the same in tens of microseconds.
 * The native key of each Keypair is made once and kept beside it.
 */
const nativeKeys = new WeakMap<Keypair, KeyObject>();

function nativeKeyOf(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** The Keypair of an unsealed 64-byte ed25519 secret (seed then public key), checked for consistency. */
export function keypairFromSecret(secret: Uint8Array): Keypair {
  if (secret.length !== 64) throw new Error('a wallet secret is 64 bytes');
  const key = nativeKeyOf(secret.subarray(0, 32));
  const derived = createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(-32);
  if (!derived.equals(secret.subarray(32))) throw new Error('the wallet secret is invalid: its public half is not the seed\'s');
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
      key = nativeKeyOf(signer.secretKey.subarray(0, 32));
      nativeKeys.set(signer, key);
    }
    // A plain Uint8Array, as web3.js keeps its signatures (a Buffer compares unequal to one).
    transaction.addSignature(signer.publicKey, new Uint8Array(sign(null, message, key)));
  }
}
