import { createHmac } from 'node:crypto';
import { deriveKey, seal, unseal } from '../crypto';

/** How a doorbell's URL and secret are kept: sealed under the master key, the URL found by a keyed hash. */
export class DoorbellSeals {
  /** Keys the URL hashes: apart from the sealing key, so one never stands in for the other. */
  private readonly urlHashKey: Buffer;

  constructor(private readonly masterKey: Buffer) {
    this.urlHashKey = deriveKey(masterKey, 'doorbell-url-hash');
  }

  /** Finds a citizen's doorbell by URL without storing the URL; keyed per citizen, so equal URLs of two citizens do not match. */
  urlHash(agentId: string, url: string): string {
    return createHmac('sha256', this.urlHashKey).update(`${agentId}\n${url}`, 'utf8').digest('hex');
  }

  sealUrl(doorbellId: string, url: string): string {
    return seal(this.masterKey, Buffer.from(url, 'utf8'), `doorbell-url:${doorbellId}`);
  }

  unsealUrl(doorbellId: string, sealed: string): string {
    return unseal(this.masterKey, sealed, `doorbell-url:${doorbellId}`).toString('utf8');
  }

  sealSecret(doorbellId: string, secret: string | undefined): string | null {
    return secret === undefined ? null : seal(this.masterKey, Buffer.from(secret, 'utf8'), `doorbell:${doorbellId}`);
  }

  /** The HMAC key of the doorbell's signatures. */
  unsealSecret(doorbellId: string, sealed: string): Buffer {
    return unseal(this.masterKey, sealed, `doorbell:${doorbellId}`);
  }
}
