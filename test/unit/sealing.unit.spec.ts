import { randomBytes } from 'node:crypto';
import { seal, unseal } from '@svc/vault';

const key = randomBytes(32);
const parts = (sealed: string) => sealed.split('.');

describe('sealed values', () => {
  it('open with the key and context they were sealed with', () => {
    const sealed = seal(key, Buffer.from('secret'), 'wallet:agent_1');
    expect(unseal(key, sealed, 'wallet:agent_1').toString()).toBe('secret');
    expect(() => unseal(key, sealed, 'wallet:agent_2')).toThrow();
  });

  it('refuse a tag cut short, even to a prefix of the right one', () => {
    const sealed = seal(key, Buffer.from('secret'), 'ctx');
    const p = parts(sealed);
    const tag = Buffer.from(p[p.length - 2]!, 'base64');
    for (const length of [4, 8, 12, 15]) {
      p[p.length - 2] = tag.subarray(0, length).toString('base64');
      expect(() => unseal(key, p.join('.'), 'ctx')).toThrow('not a sealed value');
    }
  });

  it('refuse an IV of the wrong length', () => {
    const sealed = seal(key, Buffer.from('secret'), 'ctx');
    const p = parts(sealed);
    const ivAt = p.length - 3;
    p[ivAt] = Buffer.concat([Buffer.from(p[ivAt]!, 'base64'), Buffer.alloc(4)]).toString('base64');
    expect(() => unseal(key, p.join('.'), 'ctx')).toThrow('not a sealed value');
  });
});
