import { Writable } from 'node:stream';
import { createLogger } from '@svc/runtime';
import { testConfig } from '../support/env';

function capture(): { stream: Writable; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('log redaction', () => {
  it('hides secrets by their snake_case and camelCase names, at the top and nested', () => {
    const out = capture();
    const log = createLogger(testConfig({ LOG_LEVEL: 'info' }), 'redaction-test', out.stream);
    const secrets = {
      header: 'Bearer svc_sk_header_secret',
      xApiKey: 'x-api-key-secret',
      apiKey: 'camel-api-key-secret',
      walletSecret: 'camel-wallet-secret',
      nestedSnake: 'nested-snake-secret-key',
      deepCamel: 'deep-camel-secret-key',
      topSnake: 'top-snake-api-key',
    };
    log.info(
      {
        api_key: secrets.topSnake,
        req: {
          method: 'POST',
          url: '/api/v1/register',
          headers: { authorization: secrets.header, 'x-api-key': secrets.xApiKey },
          body: { apiKey: secrets.apiKey, walletSecret: secrets.walletSecret, wallet: { secret_key: secrets.nestedSnake }, a: { b: { secretKey: secrets.deepCamel } } },
        },
      },
      'a request carrying secrets',
    );
    const text = out.text();
    expect(text).toContain('a request carrying secrets');
    expect(text).toContain('/api/v1/register');
    for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);
    expect(text.match(/\[redacted\]/g)).toHaveLength(Object.keys(secrets).length);
  });
});
