import { createHmac } from 'node:crypto';
import { Keyring } from '../keyring';

/** How a doorbell's URL and secret are kept: sealed under the doorbell subkey, the URL found by a keyed hash. */
export class DoorbellSeals {
  private readonly keys: Keyring;
  /** What URL hashes were keyed with before the key hierarchy: a lookup still finds rows `npm run rekey` has not reached. */
  private readonly legacyUrlHashKeys: Buffer[];

  constructor(masterKey: Buffer | Keyring) {
    this.keys = Keyring.of(masterKey);
    this.legacyUrlHashKeys = this.keys.legacyDerivedKeys('doorbell-url-hash');
  }

  /** Finds a citizen's doorbell by URL without storing the URL; keyed per citizen, so equal URLs of two citizens do not match. */
  urlHash(agentId: string, url: string): string {
    return this.keys.mac('doorbell-url-hash', urlHashInput(agentId, url));
  }

  /** Every hash the URL may be stored under while a rotation runs, the current one first. */
  urlHashes(agentId: string, url: string): string[] {
    const legacy = this.legacyUrlHashKeys.map((key) => createHmac('sha256', key).update(urlHashInput(agentId, url), 'utf8').digest('hex'));
    return [...this.keys.macs('doorbell-url-hash', urlHashInput(agentId, url)), ...legacy];
  }

  sealUrl(doorbellId: string, url: string): string {
    return this.keys.seal('doorbell', Buffer.from(url, 'utf8'), `doorbell-url:${doorbellId}`);
  }

  unsealUrl(doorbellId: string, sealed: string): string {
    return this.keys.unseal('doorbell', sealed, `doorbell-url:${doorbellId}`).toString('utf8');
  }

  sealSecret(doorbellId: string, secret: string | undefined): string | null {
    return secret === undefined ? null : this.keys.seal('doorbell', Buffer.from(secret, 'utf8'), `doorbell:${doorbellId}`);
  }

  /** The HMAC key of the doorbell's signatures. */
  unsealSecret(doorbellId: string, sealed: string): Buffer {
    return this.keys.unseal('doorbell', sealed, `doorbell:${doorbellId}`);
  }
}

function urlHashInput(agentId: string, url: string): string {
  return `${agentId}\n${url}`;
}
