import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import bs58 from 'bs58';

export const API_KEY_PREFIX = 'svc_sk_';

/** SERVICE_MASTER_KEY_OLD: the master keys before the current one, comma-separated base64. */
export function previousMasterKeys(configured: string | undefined): Buffer[] {
  return (configured ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const key = Buffer.from(part, 'base64');
      if (key.length !== 32) throw new Error('SERVICE_MASTER_KEY_OLD must hold 32-byte base64 keys, comma-separated');
      return key;
    });
}

/** The key that seals custody secrets. Unset: generated once into the data directory. */
export function loadMasterKey(configured: string | undefined, dataDir: string): { key: Buffer; generatedAt?: string } {
  if (configured) {
    const key = Buffer.from(configured, 'base64');
    if (key.length !== 32) throw new Error('SERVICE_MASTER_KEY must be 32 bytes, base64-encoded');
    return { key };
  }
  const file = path.join(dataDir, 'master.key');
  fs.mkdirSync(dataDir, { recursive: true, mode: DATA_DIR_MODE });
  try {
    fs.writeFileSync(file, randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 });
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    return { key, generatedAt: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  refuseOpenKeyFile(file);
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return { key };
}

/** The data directory holds the database the master key protects: only its owner may enter it. */
export const DATA_DIR_MODE = 0o700;

/** A key file anyone but its owner can read is a key already given away: refuse it, and say how to mend it. */
function refuseOpenKeyFile(file: string): void {
  const mode = fs.statSync(file).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  throw new Error(
    `${file} is open to other users (mode ${mode.toString(8).padStart(4, '0')}); run \`chmod 600 ${file}\` and start again. ` +
      'In production keep the master key outside DATA_DIR: set SERVICE_MASTER_KEY from a secret store or a file only the service can read',
  );
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM. `context` is bound as associated data, so a sealed value cannot be moved to another row. */
export function seal(key: Buffer, plaintext: Uint8Array, context: string): string {
  return `v1.${sealParts(key, plaintext, context)}`;
}

/** `<iv>.<tag>.<body>` in base64: what follows the version (and key id) of a sealed value. */
export function sealParts(key: Buffer, plaintext: Uint8Array, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return [iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
}

export function unseal(key: Buffer, sealed: string, context: string): Buffer {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || iv === undefined || tag === undefined || body === undefined) throw new Error('not a sealed value');
  return openSealed(key, iv, tag, body, context);
}

export function openSealed(key: Buffer, iv: string, tag: string, body: string, context: string): Buffer {
  return openGcm(key, Buffer.from(iv, 'base64'), Buffer.from(tag, 'base64'), Buffer.from(body, 'base64'), context);
}

/** Node accepts a GCM tag cut short unless told its length, and a 4-byte tag is forgeable: both lengths are checked. */
function openGcm(key: Buffer, iv: Buffer, tag: Buffer, body: Buffer, context: string): Buffer {
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]);
}

/** 32 secret bytes for `purpose`, the same every time for the same key and purpose: an HMAC under the master key. */
export function deriveKey(masterKey: Buffer, purpose: string): Buffer {
  return createHmac('sha256', masterKey).update(`derive\n${purpose}`).digest();
}

/**
 * `svc_sk_<key id>_<secret>`: the id (not secret) finds the credential, the secret's hash is then
 * compared in constant time, so the lookup never compares secret material in variable time.
 */
export function newApiKey(): string {
  return `${API_KEY_PREFIX}${bs58.encode(randomBytes(12))}_${bs58.encode(randomBytes(32))}`;
}

/** The key id of a well-formed key, or undefined. */
export function apiKeyId(apiKey: string): string | undefined {
  const match = /^svc_sk_([1-9A-HJ-NP-Za-km-z]{8,24})_[1-9A-HJ-NP-Za-km-z]{32,64}$/.exec(apiKey);
  return match?.[1];
}

/** Keys carry 256 random bits, so a plain SHA-256 is enough to make the stored form useless to a thief. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
