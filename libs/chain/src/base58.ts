import { PublicKey } from '@solana/web3.js';

let installed = false;

/**
 * Remembers each key's base58 name on the key. web3.js encodes it anew on every call, from the key's big number
 * through bytes, and base58 is a loop of divisions: compiling a trade's message asks the same key objects for
 * their names once per instruction account, and the bundled chain names every key of every transaction it
 * records. A PublicKey never changes, so its name is kept beside it (weakly: it goes with the key), and the SDKs'
 * own calls, which no option reaches, are served too.
 */
export function rememberBase58Names(): void {
  if (installed) return;
  installed = true;
  const names = new WeakMap<PublicKey, string>();
  const encode = PublicKey.prototype.toBase58;
  PublicKey.prototype.toBase58 = function toBase58(this: PublicKey): string {
    let name = names.get(this);
    if (name === undefined) {
      name = encode.call(this);
      names.set(this, name);
    }
    return name;
  };
}
