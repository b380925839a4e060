import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Rejected } from '@svc/domain';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { ImageFetcher } from '../../apps/api/src/tokens/fetchImage';
import { MAX_IMAGE_BYTES } from '../../apps/api/src/tokens/image';
import { hostDeployMetadata, hostMetadata } from '../../apps/api/src/tokens/media';
import { freshDatabase, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';
import { checkedFetch } from '../support/openapi';
import { freePort } from '../support/ports';
import { startLocalHttps } from '../support/tls';

jest.setTimeout(60_000);

const PUBLIC_URL = 'https://society.example';
const PNG = Buffer.concat([Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'), randomBytes(64)]);
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const mediaPath = (uri: string) => new URL(uri).pathname;

/** A name the certificate covers, which a test fetcher's `lookup` makes resolve where the test says. */
const IMAGE_HOST = 'images.example.com';

const resolvingTo =
  (address: string): LookupFunction =>
  (_hostname, options, callback) => {
    const family = address.includes(':') ? 6 : 4;
    if (options.all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };

const notFound: LookupFunction = (hostname, _options, callback) =>
  callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 4);

/**
 * A real https server on 127.0.0.1 with a self-signed certificate, serving images and misbehaving on
 * request. Only a fetcher built with the explicit test allowance (loopback + this CA) can reach it.
 */
class ImageServer {
  readonly paths: string[] = [];
  /** Set when a response the server was streaming ended because the client hung up. */
  streamCut?: Promise<number>;

  private constructor(
    private readonly server: https.Server,
    readonly port: number,
    readonly caFile: string,
  ) {}

  static async start(): Promise<ImageServer> {
    let image!: ImageServer;
    const { server, port, caFile } = await startLocalHttps(IMAGE_HOST, 'media-ca', (req, res) => image.serve(req, res));
    image = new ImageServer(server, port, caFile);
    return image;
  }

  url(pathname: string, host = '127.0.0.1'): string {
    return `https://${host}:${this.port}${pathname}`;
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const pathname = req.url ?? '/';
    this.paths.push(pathname);
    switch (pathname) {
      case '/cat.png':
        // The declared type is a lie on purpose: the bytes decide.
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(PNG);
        return;
      case '/cat.gif':
        res.writeHead(200, { 'content-type': 'image/gif' }).end(GIF);
        return;
      case '/at-limit.png': {
        const body = Buffer.alloc(MAX_IMAGE_BYTES);
        PNG.copy(body);
        res.writeHead(200, { 'content-type': 'image/png' }).end(body);
        return;
      }
      case '/redirect':
        res.writeHead(302, { location: '/cat.png' }).end();
        return;
      case '/redirect-loop':
        res.writeHead(301, { location: '/redirect-loop' }).end();
        return;
      case '/redirect-http':
        res.writeHead(302, { location: `http://127.0.0.1:${this.port}/cat.png` }).end();
        return;
      case '/redirect-metadata':
        res.writeHead(307, { location: 'https://169.254.169.254/latest/meta-data/' }).end();
        return;
      case '/page.html':
        res.writeHead(200, { 'content-type': 'image/png' }).end('<!doctype html><html><body>not an image</body></html>');
        return;
      case '/declared-huge.png':
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(MAX_IMAGE_BYTES + 1) });
        res.write(PNG);
        return;
      case '/endless.png':
        this.streamCut = this.endless(res);
        return;
      case '/hang':
        return;
      case '/trickle.png':
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(PNG.subarray(0, 16));
        return;
      default:
        res.writeHead(404).end();
    }
  }

  /** PNG bytes without end and without a length, until the client hangs up; resolves with what was written. */
  private endless(res: ServerResponse): Promise<number> {
    res.writeHead(200, { 'content-type': 'image/png' });
    const chunk = Buffer.alloc(64 * 1024, 7);
    PNG.copy(chunk);
    return new Promise((resolve) => {
      let written = 0;
      let open = true;
      res.on('close', () => {
        open = false;
        resolve(written);
      });
      const pump = () => {
        while (open && written < 64 * MAX_IMAGE_BYTES) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

async function refusal(promise: Promise<unknown>): Promise<Rejected> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Rejected);
  const rejected = error as Rejected;
  expect(rejected).toMatchObject({ code: 'invalid_request', details: { field: 'image' } });
  return rejected;
}

describe('token media: image intake, metadata hosting and GET /api/v1/media/{sha256}', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let images: ImageServer;
  /** The explicit test allowance: loopback and the test CA. Private and metadata addresses stay refused. */
  let local: ImageFetcher;

  beforeAll(async () => {
    db = await freshDatabase('media');
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, DATA_DIR: tempDir('media'), PUBLIC_URL, SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }));
    images = await ImageServer.start();
    local = new ImageFetcher({ allowLoopback: true, caFile: images.caFile });
  });
  afterAll(async () => {
    await images?.close();
    await server?.close();
    await db?.drop();
  });

  const storedCount = async () =>
    Number((await server.services.database.db.selectFrom('vault.media').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  describe('data URLs', () => {
    it('hosts the image and a pump.fun-shaped metadata JSON under PUBLIC_URL, addressed by sha256', async () => {
      const input = { name: 'Media Coin', symbol: 'MEDIA', description: 'hosted here', image: `data:image/png;base64,${PNG.toString('base64')}`, website: 'https://media.example' };
      const hosted = await hostDeployMetadata(server.services, input);
      expect(hosted.image).toBe(`${PUBLIC_URL}/api/v1/media/${sha256(PNG)}`);
      expect(hosted.metadata_uri).toMatch(new RegExp(`^${PUBLIC_URL}/api/v1/media/[0-9a-f]{64}$`));

      const metadata = await call(server.url, 'GET', mediaPath(hosted.metadata_uri));
      expect(metadata.status).toBe(200);
      expect(metadata.headers.get('content-type')).toMatch(/^application\/json/);
      expect(metadata.body).toEqual({
        name: 'Media Coin',
        symbol: 'MEDIA',
        description: 'hosted here',
        image: hosted.image,
        showName: true,
        createdOn: PUBLIC_URL,
        website: 'https://media.example',
      });
      const raw = Buffer.from(await (await checkedFetch(server.url + mediaPath(hosted.metadata_uri))).arrayBuffer());
      expect(sha256(raw)).toBe(mediaPath(hosted.metadata_uri).split('/').pop());

      // The same request again hosts nothing new and proposes the same URIs (a retried deploy).
      const before = await storedCount();
      expect(await hostDeployMetadata(server.services, input)).toEqual(hosted);
      expect(await storedCount()).toBe(before);
    });

    it('refuses a mismatched or unsupported data URL before storing anything', async () => {
      const before = await storedCount();
      const input = (image: string) => ({ name: 'n', symbol: 's', image });
      expect((await refusal(hostDeployMetadata(server.services, input(`data:image/gif;base64,${PNG.toString('base64')}`)))).message).toMatch(/declares image\/gif but its bytes are image\/png/);
      expect((await refusal(hostDeployMetadata(server.services, input('data:image/png;base64,@@@@')))).message).toMatch(/not valid base64/);
      expect((await refusal(hostDeployMetadata(server.services, input('a cat')))).message).toMatch(/https URL or a base64 data URL/);
      expect(await storedCount()).toBe(before);
    });
  });

  describe('https URLs through the SSRF-safe agent', () => {
    it.each([
      ['loopback by address', () => images.url('/cat.png'), /public address: 127\.0\.0\.1 is a loopback/],
      ['loopback by name', () => images.url('/cat.png', 'localhost'), /localhost is a local name/],
      ['IPv6 loopback', () => 'https://[::1]/cat.png', /loopback/],
      ['a private address', () => 'https://10.1.2.3/cat.png', /10\.1\.2\.3 is a private address/],
      ['cloud metadata', () => 'https://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local/],
      ['IPv6 unique local (cloud metadata)', () => 'https://[fd00:ec2::254]/', /unique local/],
      ['http', () => 'http://example.com/cat.png', /must use https, not http/],
      ['another scheme', () => 'file:///etc/passwd', /must use https, not file/],
      ['credentials in the URL', () => 'https://user:pw@example.com/cat.png', /credentials/],
    ])('the service refuses %s', async (_name, url, reason) => {
      const before = images.paths.length;
      const refused = await refusal(hostDeployMetadata(server.services, { name: 'n', symbol: 's', image: url() }));
      expect(refused.message).toMatch(/^image URL /);
      expect(refused.message).toMatch(reason);
      expect(images.paths.length).toBe(before);
    });

    it('refuses a public-looking name that resolves to a non-public address, at connection time, without naming the address', async () => {
      const cases: Array<[ImageFetcher, string]> = [
        [new ImageFetcher({ lookup: resolvingTo('127.0.0.1'), caFile: images.caFile }), '127.0.0.1'],
        [new ImageFetcher({ allowLoopback: true, lookup: resolvingTo('10.0.0.5'), caFile: images.caFile }), '10.0.0.5'],
        [new ImageFetcher({ allowLoopback: true, lookup: resolvingTo('169.254.169.254'), caFile: images.caFile }), '169.254.169.254'],
      ];
      for (const [fetcher, address] of cases) {
        const refused = await refusal(fetcher.fetch(images.url('/cat.png', IMAGE_HOST)));
        expect(refused.message).toBe('image URL must reach a public address: its host resolves to a non-public address');
        expect(refused.message).not.toContain(address);
      }
      expect(images.paths).not.toContain('/cat.png');
    });

    it('fetches, checks and hosts an image from an https URL (test allowance), judging the type by its bytes', async () => {
      const hosted = await hostMetadata(server.services, { name: 'Fetched', symbol: 'FET', image: images.url('/cat.png') }, server.url, { fetcher: local });
      expect(hosted.image_uri).toBe(`${server.url}/api/v1/media/${sha256(PNG)}`);
      const image = await checkedFetch(hosted.image_uri);
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await image.arrayBuffer()).equals(PNG)).toBe(true);
      expect((await call(server.url, 'GET', mediaPath(hosted.metadata_uri))).body.image).toBe(hosted.image_uri);
    });

    it('follows a redirect through the same checks, at most a few times', async () => {
      expect((await local.fetch(images.url('/redirect'))).bytes.equals(PNG)).toBe(true);
      expect((await refusal(local.fetch(images.url('/redirect-loop')))).message).toMatch(/redirected more than 3 times/);
      expect((await refusal(local.fetch(images.url('/redirect-http')))).message).toMatch(/redirected to http:.*which must use https, not http/);
      expect((await refusal(local.fetch(images.url('/redirect-metadata')))).message).toMatch(/which must reach a public address: 169\.254\.169\.254/);
    });

    it('takes 4 MB exactly; refuses more, by the declared length or by stopping to read', async () => {
      expect((await local.fetch(images.url('/at-limit.png'))).bytes.length).toBe(MAX_IMAGE_BYTES);
      expect((await refusal(local.fetch(images.url('/declared-huge.png')))).message).toMatch(/too large.*4194304 bytes \(4 MB\)/);
      expect((await refusal(local.fetch(images.url('/endless.png')))).message).toMatch(/too large.*4 MB/);
      // The server was cut off just past the limit, not read to the end of its 256 MB.
      expect(await images.streamCut).toBeLessThan(2 * MAX_IMAGE_BYTES);
    });

    it('refuses what is not a png, jpg, gif or webp, whatever the server calls it', async () => {
      expect((await local.fetch(images.url('/cat.gif'))).contentType).toBe('image/gif');
      expect((await refusal(local.fetch(images.url('/page.html')))).message).toMatch(/not a png, jpg, gif or webp image.*allowed: png, jpg, gif or webp/);
    });

    it('refuses an error status, a timeout and an unreachable host as the client’s URL (400), never a fault', async () => {
      const refused = await refusal(local.fetch(images.url('/missing.png')));
      expect(refused.message).toBe('image URL answered HTTP 404');
      expect(refused.details.http_status).toBe(404);

      const quick = new ImageFetcher({ allowLoopback: true, caFile: images.caFile, timeoutMs: 300 });
      expect((await refusal(quick.fetch(images.url('/hang')))).message).toMatch(/did not answer in full within 0\.3 s/);
      expect((await refusal(quick.fetch(images.url('/trickle.png')))).message).toMatch(/did not answer in full within 0\.3 s/);

      const unresolvable = new ImageFetcher({ lookup: notFound });
      expect((await refusal(unresolvable.fetch('https://no-such-host.example/cat.png'))).message).toMatch(/could not be fetched: its host name does not resolve/);

      const port = await freePort();
      expect((await refusal(local.fetch(`https://127.0.0.1:${port}/cat.png`))).message).toMatch(/could not be fetched: its host refused the connection/);

      // Without the test CA, the self-signed certificate is not trusted.
      const untrusting = new ImageFetcher({ allowLoopback: true });
      expect((await refusal(untrusting.fetch(images.url('/cat.png')))).message).toMatch(/TLS certificate is not trusted/);
    });
  });

  describe('GET /api/v1/media/{sha256}', () => {
    let sha: string;

    beforeAll(async () => {
      ({ sha256: sha } = await server.services.media.put(GIF, 'image/gif'));
    });

    it('serves the exact bytes with their type, immutable for a year, with a strong ETag of the hash', async () => {
      const res = await checkedFetch(`${server.url}/api/v1/media/${sha}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/gif');
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('etag')).toBe(`"${sha}"`);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await res.arrayBuffer()).equals(GIF)).toBe(true);
    });

    it('answers 304 to If-None-Match with its ETag (or *), with the same validators', async () => {
      for (const tag of [`"${sha}"`, `W/"${sha}", "other"`, '*']) {
        const res = await checkedFetch(`${server.url}/api/v1/media/${sha}`, { headers: { 'if-none-match': tag } });
        expect(res.status).toBe(304);
        expect(res.headers.get('etag')).toBe(`"${sha}"`);
        expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
        expect(await res.text()).toBe('');
      }
      const other = await checkedFetch(`${server.url}/api/v1/media/${sha}`, { headers: { 'if-none-match': `"${'0'.repeat(64)}"` } });
      expect(other.status).toBe(200);
    });

    it('answers HEAD with the headers alone', async () => {
      const res = await checkedFetch(`${server.url}/api/v1/media/${sha}`, { method: 'HEAD' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe(String(GIF.length));
      expect(res.headers.get('content-type')).toBe('image/gif');
    });

    it('is 404 not_found in the envelope for an unknown or malformed address, even with If-None-Match: *', async () => {
      for (const address of [sha256(randomBytes(8)), 'xyz', sha.toUpperCase(), `${sha}0`]) {
        const res = await call(server.url, 'GET', `/api/v1/media/${address}`);
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ ok: false, error: { code: 'not_found' } });
      }
      const star = await call(server.url, 'GET', `/api/v1/media/${sha256(randomBytes(8))}`, { headers: { 'if-none-match': '*' } });
      expect(star.status).toBe(404);
    });

    it('is public: no key needed, and listed in /openapi.json', async () => {
      const openapi = await call(server.url, 'GET', '/openapi.json');
      expect(openapi.body.paths['/api/v1/media/{sha256}'].get).toMatchObject({ security: [], parameters: expect.arrayContaining([expect.objectContaining({ name: 'sha256', in: 'path', required: true })]) });
      expect(openapi.body.paths['/api/v1/media/{sha256}'].get.responses['304']).toBeDefined();
    });
  });
});
