import { createHmac, hkdfSync } from 'node:crypto';
import { deriveKey, openSealed, sealParts, unseal } from './crypto';

/**
 * What the master key is used for, each through a key of its own: a key found in one place (a MAC key, a
 * derived mint) says nothing of the others, and none is the master key itself. Memory notes are not here:
 * they are sealed under keys only the citizen's API key derives.
 */
export type KeyPurpose = 'wallet' | 'idempotency' | 'request-hash' | 'doorbell' | 'doorbell-url-hash' | 'service-wallet' | 'mint-derivation';

const HKDF_SALT = Buffer.from('svc master key hierarchy', 'utf8');
const SEALED_V2 = 'v2';

/** HKDF-SHA256 (RFC 5869) of the master key, one 32-byte subkey per purpose. */
export function subkey(masterKey: Buffer, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, HKDF_SALT, `svc ${purpose} v2`, 32));
}

/** A master key's public name in sealed values (`v2.<kid>.…`): 8 bytes of HKDF, telling nothing of the key. */
export function keyId(masterKey: Buffer): string {
  return Buffer.from(hkdfSync('sha256', masterKey, HKDF_SALT, 'svc key id', 8)).toString('hex');
}

/**
 * The master key in force and, while a rotation runs, the ones before it. Seals under the current key's
 * subkeys as `v2.<kid>.<iv>.<tag>.<body>`; opens those of any key it holds, and `v1` values (sealed under a
 * master key itself, before the hierarchy) until `npm run rekey` has sealed them again.
 */
export class Keyring {
  readonly kid: string;
  private readonly masters = new Map<string, Buffer>();
  private readonly derived = new Map<string, Buffer>();

  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    for (const key of [current, ...previous]) {
      if (key.length !== 32) throw new Error('a master key is 32 bytes');
      this.masters.set(keyId(key), key);
    }
    this.kid = keyId(current);
  }

  static of(key: Buffer | Keyring): Keyring {
    return key instanceof Keyring ? key : new Keyring(key);
  }

  subkey(purpose: KeyPurpose, kid = this.kid): Buffer {
    const id = `${kid}\n${purpose}`;
    let found = this.derived.get(id);
    if (!found) {
      const master = this.masters.get(kid);
      if (!master) throw new Error(`sealed under master key ${kid}, which is not given: set SERVICE_MASTER_KEY_OLD to it until \`npm run rekey\` has run`);
      found = subkey(master, purpose);
      this.derived.set(id, found);
    }
    return found;
  }

  seal(purpose: KeyPurpose, plaintext: Uint8Array, context: string): string {
    return `${SEALED_V2}.${this.kid}.${sealParts(this.subkey(purpose), plaintext, context)}`;
  }

  unseal(purpose: KeyPurpose, sealed: string, context: string): Buffer {
    if (!sealed.startsWith(`${SEALED_V2}.`)) return this.unsealV1(sealed, context);
    const [, kid, iv, tag, body] = sealed.split('.');
    if (!kid || iv === undefined || tag === undefined || body === undefined) throw new Error('not a sealed value');
    return openSealed(this.subkey(purpose, kid), iv, tag, body, context);
  }

  /** Sealed under the current key already: `npm run rekey` leaves it. */
  isCurrent(sealed: string): boolean {
    return sealed.startsWith(`${SEALED_V2}.${this.kid}.`);
  }

  /** The purpose's subkey of every master key held, the current one first. */
  subkeys(purpose: KeyPurpose): Buffer[] {
    return [...this.masters.keys()].map((kid) => this.subkey(purpose, kid));
  }

  /** A MAC under the purpose's subkey of the current key (or of `kid`). */
  mac(purpose: KeyPurpose, data: string, kid = this.kid): string {
    return createHmac('sha256', this.subkey(purpose, kid)).update(data, 'utf8').digest('hex');
  }

  /** The MAC of `data` under every key held, the current first: what a lookup by a keyed hash must try during a rotation. */
  macs(purpose: KeyPurpose, data: string): string[] {
    return [...this.masters.keys()].map((kid) => this.mac(purpose, data, kid));
  }

  /** Keys derived by `deriveKey` from each master key held: what keyed hashes written before the hierarchy used. */
  legacyDerivedKeys(purpose: string): Buffer[] {
    return [...this.masters.values()].map((master) => deriveKey(master, purpose));
  }

  /** Before the hierarchy, values were sealed under the master key itself: whichever of those this keyring holds. */
  private unsealV1(sealed: string, context: string): Buffer {
    let failure: unknown;
    for (const master of this.masters.values()) {
      try {
        return unseal(master, sealed, context);
      } catch (error) {
        failure = error;
      }
    }
    throw failure;
  }
}
