import { Rejected } from '@svc/domain';
import { MAX_IMAGE_BYTES, parseImageDataUrl, sniffImageType } from '../../apps/api/src/tokens/image';
import { mediaUrl, tokenMetadata } from '../../apps/api/src/tokens/media';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x1a, 0, 0, 0]), Buffer.from('WEBPVP8L'), Buffer.alloc(14)]);

const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;

/** The refusal `run` throws: always invalid_request naming `image`. */
function refusal(run: () => unknown): Rejected {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(Rejected);
    const rejected = error as Rejected;
    expect(rejected.code).toBe('invalid_request');
    expect(rejected.details.field).toBe('image');
    expect(rejected.message).toMatch(/^image /);
    return rejected;
  }
  throw new Error('expected a refusal');
}

describe('image type by magic bytes', () => {
  it.each([
    ['png', PNG, 'image/png'],
    ['jpg', JPEG, 'image/jpeg'],
    ['gif (89a)', GIF, 'image/gif'],
    ['gif (87a)', Buffer.from('GIF87a\x01\x00\x01\x00', 'latin1'), 'image/gif'],
    ['webp', WEBP, 'image/webp'],
  ])('knows %s', (_name, bytes, type) => {
    expect(sniffImageType(bytes)).toBe(type);
  });

  it.each([
    ['empty', Buffer.alloc(0)],
    ['html', Buffer.from('<!doctype html><html>')],
    ['svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')],
    ['a truncated png signature', PNG.subarray(0, 7)],
    ['RIFF that is not WEBP (wav)', Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt ')])],
    ['GIF without its version', Buffer.from('GIF8')],
    ['bmp', Buffer.from('BM\x00\x00\x00\x00\x00\x00\x00\x00', 'latin1')],
  ])('refuses %s', (_name, bytes) => {
    expect(sniffImageType(bytes)).toBeUndefined();
  });
});

describe('image data URLs', () => {
  it.each([
    ['image/png', PNG, 'image/png'],
    ['image/jpeg', JPEG, 'image/jpeg'],
    ['image/jpg', JPEG, 'image/jpeg'],
    ['IMAGE/GIF', GIF, 'image/gif'],
    ['image/webp', WEBP, 'image/webp'],
  ])('decodes %s to its bytes and the type the bytes carry', (declared, bytes, type) => {
    expect(parseImageDataUrl(dataUrl(declared, bytes))).toEqual({ bytes, contentType: type });
  });

  it('decodes as forgiving-base64 does: whitespace ignored, padding optional, parameters before base64 allowed', () => {
    const encoded = PNG.toString('base64');
    const wrapped = encoded.replace(/(.{20})/g, '$1\n ');
    expect(parseImageDataUrl(`data:image/png;base64,${wrapped}`).bytes).toEqual(PNG);
    expect(parseImageDataUrl(`data:image/png;base64,${encoded.replace(/=+$/, '')}`).bytes).toEqual(PNG);
    expect(parseImageDataUrl(`data:image/png;name=a.png;base64,${encoded}`).bytes).toEqual(PNG);
  });

  it('refuses what is not a base64 data URL, saying how one looks', () => {
    expect(refusal(() => parseImageDataUrl('data:image/png,%89PNG')).message).toMatch(/base64-encoded: data:image\/png;base64/);
    expect(refusal(() => parseImageDataUrl('data:image/png;base64')).message).toMatch(/data URL/);
    expect(refusal(() => parseImageDataUrl('data:image/png;base64,')).message).toMatch(/empty/);
    expect(refusal(() => parseImageDataUrl('data:image/png;base64,iVBOR!w0K')).message).toMatch(/not valid base64/);
    expect(refusal(() => parseImageDataUrl('data:image/png;base64,iVBORw0KG')).message).toMatch(/not valid base64/);
    expect(refusal(() => parseImageDataUrl('data:image/png;base64,iVBO-w0K')).message).toMatch(/not valid base64/);
  });

  it('refuses a declared type outside png, jpg, gif and webp, listing the allowed ones', () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>');
    expect(refusal(() => parseImageDataUrl(dataUrl('image/svg+xml', svg))).message).toMatch(/"image\/svg\+xml".*png, jpg, gif or webp/);
    expect(refusal(() => parseImageDataUrl(dataUrl('', PNG))).message).toMatch(/declares no type/);
    expect(refusal(() => parseImageDataUrl(dataUrl('application/octet-stream', PNG))).message).toMatch(/png, jpg, gif or webp/);
  });

  it('judges by the bytes: a declared image type whose bytes are another, or no image, is refused', () => {
    expect(refusal(() => parseImageDataUrl(dataUrl('image/png', JPEG))).message).toMatch(/declares image\/png but its bytes are image\/jpeg/);
    expect(refusal(() => parseImageDataUrl(dataUrl('image/gif', WEBP))).message).toMatch(/declares image\/gif but its bytes are image\/webp/);
    expect(refusal(() => parseImageDataUrl(dataUrl('image/png', Buffer.from('<html><script>alert(1)</script>')))).message).toMatch(
      /not a png, jpg, gif or webp image.*allowed: png, jpg, gif or webp/,
    );
  });

  it('takes exactly 4 MB decoded and refuses a byte more, naming the limit', () => {
    const atLimit = Buffer.alloc(MAX_IMAGE_BYTES, 0);
    PNG.copy(atLimit);
    expect(parseImageDataUrl(dataUrl('image/png', atLimit)).bytes.length).toBe(4 * 1024 * 1024);

    const over = Buffer.alloc(MAX_IMAGE_BYTES + 1, 0);
    PNG.copy(over);
    const refused = refusal(() => parseImageDataUrl(dataUrl('image/png', over)));
    expect(refused.message).toMatch(/too large.*4194304 bytes \(4 MB\)/);
    expect(refused.details.limit).toBe(MAX_IMAGE_BYTES);
  });

  it('refuses a far larger payload by its length, before decoding it', () => {
    const huge = `data:image/png;base64,${'A'.repeat(8 * 1024 * 1024)}`;
    expect(refusal(() => parseImageDataUrl(huge)).message).toMatch(/too large/);
  });
});

describe('metadata document', () => {
  it('has the shape pump.fun hosts, links only when given', () => {
    const image = mediaUrl('https://society.example/', 'ab'.repeat(32));
    expect(image).toBe(`https://society.example/api/v1/media/${'ab'.repeat(32)}`);
    expect(tokenMetadata({ name: 'Coin', symbol: 'CN', twitter: ' https://x.com/coin ', telegram: '' }, image, 'https://society.example')).toEqual({
      name: 'Coin',
      symbol: 'CN',
      description: '',
      image,
      showName: true,
      createdOn: 'https://society.example',
      twitter: 'https://x.com/coin',
    });
  });
});
