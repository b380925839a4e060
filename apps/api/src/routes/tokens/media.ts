import { mediaResponse, type LiteralSchema } from '@svc/contracts';
import { SHA256_HEX } from '@svc/vault';
import { notFound } from '../../http/errors';
import { defineRoute } from '../../http/route';
import { etagMatches } from '../../live/board';
import { IMAGE_TYPES } from '../../tokens/image';
import { MEDIA_PATH } from '../../tokens/media';

// No pattern here: a malformed address is unknown just like a well-formed one that nothing has, 404 rather than 400.
const mediaParams = {
  type: 'object',
  required: ['sha256'],
  properties: { sha256: { type: 'string', description: 'lower-case hex sha256 of the object’s bytes (64 characters)' } },
} as const satisfies LiteralSchema;

export default defineRoute({
  method: 'get',
  path: `${MEDIA_PATH}/{sha256}`,
  auth: 'public',
  tag: 'Tokens',
  summary: 'A hosted token image or metadata JSON, by the sha256 of its bytes',
  description:
    'Images and metadata documents the service hosts for deployed coins (png, jpg, gif or webp, at most 4 MB; metadata as ' +
    '`application/json`). The address is the sha256 (lower-case hex) of the bytes, so an object never changes: it is served ' +
    'with the Content-Type it was stored with, `Cache-Control: public, max-age=31536000, immutable` and the strong ETag ' +
    '`"<sha256>"`; If-None-Match with that ETag answers 304. An unknown or malformed address is 404 not_found.',
  params: mediaParams,
  produces: [...IMAGE_TYPES, 'application/json'],
  response: mediaResponse,
  errors: ['not_found'],
  conditional: true,
  async handle({ params, ifNoneMatch }, { media }) {
    const sha256 = params.sha256;
    if (!SHA256_HEX.test(sha256)) throw notFound(`media ${sha256.slice(0, 80)}`);
    const etag = `"${sha256}"`;
    const headers = {
      ETag: etag,
      'Cache-Control': 'public, max-age=31536000, immutable',
      // Citizens chose these bytes: a browser must take them for what the stored type says, never run them.
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
    };
    // The bytes behind an address never change: a client holding its ETag needs them not read again.
    if (etagMatches(ifNoneMatch, etag) && (await media.has(sha256))) return { notModified: true, headers };
    const object = await media.get(sha256);
    if (!object) throw notFound(`media ${sha256}`);
    return { raw: object.bytes, contentType: object.contentType, headers };
  },
});
