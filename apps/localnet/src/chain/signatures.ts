import { createPublicKey, KeyObject, verify } from 'node:crypto';
import type { VersionedTransaction } from '@solana/web3.js';

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const keyCache = new Map<string, KeyObject>();

function keyObject(raw: Uint8Array): KeyObject {
  const id = Buffer.from(raw).toString('base64');
  let key = keyCache.get(id);
  if (!key) {
    key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
    if (keyCache.size > 50_000) keyCache.clear();
    keyCache.set(id, key);
  }
  return key;
}

/** Every required signer signed the serialized message (node's ed25519 is ~20× faster than web3.js's JS one). */
export function signaturesValid(tx: VersionedTransaction): boolean {
  const required = tx.message.header.numRequiredSignatures;
  if (tx.signatures.length !== required) return false;
  const message = tx.message.serialize();
  const keys = tx.message.staticAccountKeys;
  for (let i = 0; i < required; i++) {
    if (!verify(null, message, keyObject(keys[i].toBytes()), tx.signatures[i])) return false;
  }
  return true;
}
