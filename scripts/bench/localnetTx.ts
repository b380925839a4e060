import { createPrivateKey, KeyObject, sign } from 'node:crypto';
import { Keypair, TransactionInstruction, TransactionMessage, VersionedTransaction } from '@solana/web3.js';

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const keys = new WeakMap<Keypair, KeyObject>();

/**
 * Signs with node's ed25519 rather than web3.js's JavaScript one (~1 ms a signature), so that a
 * benchmark client measures the chain and not its own signing.
 */
function nodeKey(keypair: Keypair): KeyObject {
  let key = keys.get(keypair);
  if (!key) {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, keypair.secretKey.subarray(0, 32)]), format: 'der', type: 'pkcs8' });
    keys.set(keypair, key);
  }
  return key;
}

export function signWire(payer: Keypair, blockhash: string, instructions: TransactionInstruction[], extra: Keypair[] = []): Buffer {
  const message = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: blockhash, instructions }).compileToLegacyMessage();
  const tx = new VersionedTransaction(message);
  const bytes = message.serialize();
  [payer, ...extra].forEach((signer, i) => tx.signatures.splice(i, 1, sign(null, bytes, nodeKey(signer))));
  return Buffer.from(tx.serialize());
}
