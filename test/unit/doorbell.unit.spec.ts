import { createHmac } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { bodyValidator, checkDoorbellUrl, queryValidator, deliveriesQuery, refusedAddress, registerDoorbellBody, replayDoorbellBody } from '@svc/contracts';
import { backoffMs, deliveryPayload, guardedLookup, signBody, signatureHeader } from '@svc/app-workers';

describe('doorbell URLs at registration', () => {
  const strict = { allowLoopback: false };
  const loopbackAllowed = { allowLoopback: true };

  it.each([
    ['https://example.com/hook', 'https://example.com/hook'],
    ['https://Hooks.Example.COM', 'https://hooks.example.com/'],
    ['https://example.com:8443/a?b=c', 'https://example.com:8443/a?b=c'],
    ['https://8.8.8.8/x', 'https://8.8.8.8/x'],
    ['https://[2606:4700:4700::1111]/x', 'https://[2606:4700:4700::1111]/x'],
  ])('accepts the public https URL %s, normalized', (raw, normalized) => {
    expect(checkDoorbellUrl(raw, strict)).toEqual({ ok: true, url: normalized });
  });

  it.each([
    ['http://example.com/hook', /https/],
    ['ftp://example.com/', /https/],
    ['not a url', /absolute https URL/],
    ['https://user:pass@example.com/', /credentials/],
    ['https://token@example.com/', /credentials/],
    ['https://example.com/#frag', /fragment/],
    ['https://example.com:0/', /port 0/],
    ['https://8.8.8.8:0/hook', /port 0/],
    ['https://10.0.0.1/', /private/],
    ['https://172.16.5.4/', /private/],
    ['https://192.168.1.1/', /private/],
    ['https://127.0.0.1/', /loopback/],
    ['https://127.8.9.10/', /loopback/],
    ['https://2130706433/', /loopback/],
    ['https://0x7f.1/', /loopback/],
    ['https://[::1]/', /loopback/],
    ['https://169.254.169.254/latest/meta-data', /link-local/],
    ['https://[fd00:ec2::254]/', /unique local/],
    ['https://[fe80::1]/', /link-local/],
    ['https://100.64.0.1/', /carrier-grade NAT/],
    ['https://224.0.0.1/', /multicast/],
    ['https://[ff02::1]/', /multicast/],
    ['https://0.0.0.0/', /unspecified/],
    ['https://[::]/', /unspecified/],
    ['https://[::ffff:127.0.0.1]/', /IPv4-mapped/],
    ['https://[::ffff:a9fe:a9fe]/', /IPv4-mapped/],
    ['https://255.255.255.255/', /reserved/],
    ['https://localhost/', /local name/],
    ['https://localhost./', /local name/],
    ['https://api.localhost/', /local name/],
    ['https://metadata.google.internal/', /local name/],
    ['https://printer.local/', /local name/],
    ['https://intranet/', /fully qualified/],
  ])('refuses %s', (raw, problem) => {
    const checked = checkDoorbellUrl(raw, strict);
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.problem).toMatch(problem);
  });

  it('with DOORBELL_ALLOW_LOOPBACK lets loopback through, and nothing else', () => {
    for (const raw of ['https://127.0.0.1:8443/x', 'https://[::1]/x', 'https://localhost:9/x', 'https://a.localhost/']) {
      expect(checkDoorbellUrl(raw, loopbackAllowed).ok).toBe(true);
    }
    for (const raw of ['https://10.0.0.1/', 'https://169.254.169.254/', 'https://[fd00:ec2::254]/', 'https://100.64.0.1/', 'https://[::ffff:127.0.0.1]/', 'https://metadata.google.internal/', 'http://127.0.0.1/']) {
      expect(checkDoorbellUrl(raw, loopbackAllowed).ok).toBe(false);
    }
  });

  it('classifies addresses the way deliveries do', () => {
    expect(refusedAddress('93.184.216.34', false)).toBeUndefined();
    expect(refusedAddress('2606:4700::1', false)).toBeUndefined();
    expect(refusedAddress('127.0.0.1', false)).toMatch(/loopback/);
    expect(refusedAddress('127.0.0.1', true)).toBeUndefined();
    expect(refusedAddress('::1', true)).toBeUndefined();
    expect(refusedAddress('169.254.169.254', true)).toMatch(/link-local/);
    expect(refusedAddress('fd00:ec2::254', true)).toMatch(/unique local/);
    expect(refusedAddress('10.1.1.1', true)).toMatch(/private/);
  });
});

describe('the resolved-address guard', () => {
  const resolvingTo =
    (...addresses: string[]): LookupFunction =>
    (_hostname, options, callback) => {
      const answers = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      if (options.all) (callback as (e: null, a: typeof answers) => void)(null, answers);
      else callback(null, answers[0]!.address, answers[0]!.family);
    };
  const lookup = (fn: LookupFunction, all: boolean) =>
    new Promise<unknown>((resolve, reject) => fn('hooks.example.com', { all }, (error, address) => (error ? reject(error) : resolve(address))));

  it('passes public answers through, in both lookup shapes', async () => {
    await expect(lookup(guardedLookup(resolvingTo('93.184.216.34'), false), false)).resolves.toBe('93.184.216.34');
    await expect(lookup(guardedLookup(resolvingTo('93.184.216.34', '2606:4700::1'), false), true)).resolves.toHaveLength(2);
  });

  it('refuses a name that resolves (or rebinds) to a non-public address, even among public ones', async () => {
    await expect(lookup(guardedLookup(resolvingTo('169.254.169.254'), true), false)).rejects.toThrow(/hooks\.example\.com resolves to a refused address: 169\.254\.169\.254/);
    await expect(lookup(guardedLookup(resolvingTo('93.184.216.34', '10.0.0.7'), false), true)).rejects.toThrow(/10\.0\.0\.7 is a private/);
    await expect(lookup(guardedLookup(resolvingTo('127.0.0.1'), false), false)).rejects.toThrow(/loopback/);
    await expect(lookup(guardedLookup(resolvingTo('127.0.0.1'), true), false)).resolves.toBe('127.0.0.1');
  });
});

describe('delivery shape, signature and backoff', () => {
  const entry = { seq: 42, type: 'PostCreated', at: 1_700_000_000_000, actor: 'agent_01', hash: 'ab'.repeat(32), data: { post_id: 'post_1', body: 'gm' } };

  it('sends {delivery_id, kind, seq, at, data} with the entry data plus its type, actor and hash', () => {
    expect(deliveryPayload({ id: 'dlv_1', kind: 'post', seq: 42, entry })).toEqual({
      delivery_id: 'dlv_1',
      kind: 'post',
      seq: 42,
      at: entry.at,
      data: { post_id: 'post_1', body: 'gm', type: 'PostCreated', actor: 'agent_01', hash: entry.hash },
    });
  });

  it('signs the raw body as sha256=<hex HMAC-SHA256> for a doorbell registered before timestamps', () => {
    const body = Buffer.from(JSON.stringify(deliveryPayload({ id: 'dlv_1', kind: 'post', seq: 42, entry })));
    expect(signBody('s3cret', body)).toBe(`sha256=${createHmac('sha256', 's3cret').update(body).digest('hex')}`);
    expect(signBody('s3cret', body)).not.toBe(signBody('s3cret', Buffer.concat([body, Buffer.from(' ')])));
    expect(signatureHeader('body', Buffer.from('s3cret'), body, 1)).toBe(signBody('s3cret', body));
  });

  it('signs "<t>.<raw body>" with the time in the header, t=<ms>,v1=<hex>', () => {
    const body = Buffer.from(JSON.stringify(deliveryPayload({ id: 'dlv_1', kind: 'post', seq: 42, entry })));
    const secret = Buffer.from('a secret of 16 bytes or more');
    const at = 1_700_000_000_123;
    const header = signatureHeader('timestamped', secret, body, at);
    expect(header).toBe(`t=${at},v1=${createHmac('sha256', secret).update(`${at}.${body.toString()}`).digest('hex')}`);
    expect(signatureHeader('timestamped', secret, body, at + 1)).not.toBe(header);
  });

  it('doubles the delay per try, between half and all of it, up to the cap', () => {
    const low = () => 0;
    const high = () => 1;
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 1000, 60_000, high))).toEqual([1000, 2000, 4000, 8000]);
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 1000, 60_000, low))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs(30, 1000, 60_000, high)).toBe(60_000);
    expect(backoffMs(30, 1000, 60_000, low)).toBe(30_000);
  });
});

describe('doorbell request schemas', () => {
  const register = bodyValidator(registerDoorbellBody);

  it.each([
    [{}, 'url', /url is required/],
    [{ url: 'https://example.com', kinds: [] }, 'kinds', /fewer than 1/],
    [{ url: 'https://example.com', kinds: ['post', 'post'] }, 'kinds', /duplicate/],
    [{ url: 'https://example.com', kinds: ['ledger'] }, 'kinds.0', /one of "post", "action", "bounty", "buyback"/],
    [{ url: 'https://example.com', secret: '' }, 'secret', /fewer than 1/],
    [{ url: 'https://example.com', secret: 'x'.repeat(257) }, 'secret', /more than 256/],
    [{ url: 'x'.repeat(2049) }, 'url', /more than 2048/],
  ])('names the offending field of %j', (body, field, message) => {
    const invalid = register(body);
    expect(invalid?.field).toBe(field);
    expect(invalid?.message).toMatch(message);
  });

  it('takes a subset of kinds and a secret up to 256 characters', () => {
    expect(register({ url: 'https://example.com', kinds: ['bounty', 'post'], secret: 'x'.repeat(256) })).toBeNull();
  });

  it('bounds the log and replay parameters', () => {
    const query = queryValidator(deliveriesQuery);
    expect(query({ status: 'muted' })).toMatchObject({ field: 'status' });
    expect(query({ limit: '500' })).toMatchObject({ field: 'limit' });
    expect(query({ id: 'door_x' })).toMatchObject({ field: 'id' });
    const replay = bodyValidator(replayDoorbellBody);
    expect(replay({ delivery_id: 'dlv_bad' })).toMatchObject({ field: 'delivery_id' });
    expect(replay({ id: 'door_01ARZ3NDEKTSV4RRFFQ69G5FAV', after_seq: -2 })).toMatchObject({ field: 'after_seq' });
  });
});
