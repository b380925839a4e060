import { hkdfSync } from 'node:crypto';

/**
 * What the master key is used for, each through a key of its own: a key found in one place (a MAC key, a
 * derived mint) says nothing of the others, and none is the master key itself.
 */
export type KeyPurpose = 'wallet' | 'idempotency' | 'doorbell' | 'service-wallet' | 'mint-derivation';

const HKDF_SALT = Buffer.from('svc master key hierarchy', 'utf8');

/** HKDF-SHA256 (RFC 5869) of the master key, one 32-byte subkey per purpose. */
export function subkey(masterKey: Buffer, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, HKDF_SALT, `svc ${purpose} v2`, 32));
}
