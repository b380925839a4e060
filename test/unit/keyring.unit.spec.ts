import { randomBytes } from 'node:crypto';
import { Keyring, keyId, seal, subkey } from '@svc/vault';

const oldKey = randomBytes(32);
const newKey = randomBytes(32);

describe('the master key hierarchy', () => {
  it('derives one key per purpose, none of them the master key, and names the master by an id', () => {
    const purposes = ['wallet', 'idempotency', 'request-hash', 'doorbell', 'doorbell-url-hash', 'service-wallet', 'mint-derivation'] as const;
    const keys = purposes.map((purpose) => subkey(newKey, purpose).toString('hex'));
    expect(new Set([...keys, newKey.toString('hex')]).size).toBe(purposes.length + 1);
    expect(subkey(newKey, 'wallet')).toEqual(subkey(Buffer.from(newKey), 'wallet'));
    expect(keyId(newKey)).toMatch(/^[0-9a-f]{16}$/);
    expect(keyId(newKey)).not.toBe(keyId(oldKey));
  });

  it('seals as v2.<kid>.… under the purpose subkey, and opens only with the same purpose and context', () => {
    const ring = new Keyring(newKey);
    const sealed = ring.seal('wallet', Buffer.from('secret'), 'wallet:agent_1');
    expect(sealed.startsWith(`v2.${keyId(newKey)}.`)).toBe(true);
    expect(ring.isCurrent(sealed)).toBe(true);
    expect(ring.unseal('wallet', sealed, 'wallet:agent_1').toString()).toBe('secret');
    expect(() => ring.unseal('doorbell', sealed, 'wallet:agent_1')).toThrow();
    expect(() => ring.unseal('wallet', sealed, 'wallet:agent_2')).toThrow();
  });

  it('opens what an older key sealed, v1 or v2, while that key is given, and says which key is missing otherwise', () => {
    const before = new Keyring(oldKey);
    const v1 = seal(oldKey, Buffer.from('from v1'), 'wallet:agent_1');
    const v2 = before.seal('wallet', Buffer.from('from v2'), 'wallet:agent_1');
    const rotating = new Keyring(newKey, [oldKey]);
    expect(rotating.unseal('wallet', v1, 'wallet:agent_1').toString()).toBe('from v1');
    expect(rotating.unseal('wallet', v2, 'wallet:agent_1').toString()).toBe('from v2');
    expect(rotating.isCurrent(v1) || rotating.isCurrent(v2)).toBe(false);
    const after = new Keyring(newKey);
    expect(() => after.unseal('wallet', v2, 'wallet:agent_1')).toThrow(`sealed under master key ${keyId(oldKey)}, which is not given: set SERVICE_MASTER_KEY_OLD`);
    expect(() => after.unseal('wallet', v1, 'wallet:agent_1')).toThrow();
  });

  it('refuses a v2 value whose tag was cut short', () => {
    const ring = new Keyring(newKey);
    const parts = ring.seal('wallet', Buffer.from('secret'), 'ctx').split('.');
    parts[3] = Buffer.from(parts[3]!, 'base64').subarray(0, 4).toString('base64');
    expect(() => ring.unseal('wallet', parts.join('.'), 'ctx')).toThrow('not a sealed value');
  });
});
