import { Rejected } from '@svc/domain';

/** The spec's limit on a deploy image, decoded: 4 MB. */
export const MAX_IMAGE_BYTES = 4 * 1024 * 1024;

export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

export const IMAGE_TYPES: readonly ImageType[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

const ALLOWED_TEXT = 'png, jpg, gif or webp';

/** How many leading bytes sniffImageType needs to tell every allowed type apart. */
export const SNIFF_BYTES = 12;

const startsWith = (bytes: Uint8Array, signature: number[], at = 0) => signature.every((byte, i) => bytes[at + i] === byte);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/**
 * The image type its bytes say it is (the signatures of the four formats, WHATWG MIME Sniffing 6.1), or
 * undefined. A declared type is never taken on trust: a file named .png may be anything.
 */
export function sniffImageType(bytes: Uint8Array): ImageType | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  return undefined;
}

/** A refusal of the deploy's `image`, as the caller sees it. */
export function imageRejected(reason: string, details: Record<string, unknown> = {}): Rejected {
  return new Rejected('invalid_request', `image ${reason}`, { field: 'image', ...details });
}

export const tooLarge = (size?: number) =>
  imageRejected(`is too large${size === undefined ? '' : ` (${size} bytes)`}: at most ${MAX_IMAGE_BYTES} bytes (4 MB) decoded`, { limit: MAX_IMAGE_BYTES });

export const notAnImage = (what: string) => imageRejected(`${what} is not a png, jpg, gif or webp image (judged by its bytes); allowed: ${ALLOWED_TEXT}`);

/** The allowed type named by a declared MIME type, `image/jpg` (a common misspelling) included. */
function declaredType(mime: string): ImageType | undefined {
  const type = mime.trim().toLowerCase();
  if (type === 'image/jpg' || type === 'image/pjpeg') return 'image/jpeg';
  return (IMAGE_TYPES as readonly string[]).includes(type) ? (type as ImageType) : undefined;
}

const BASE64 = /^[A-Za-z0-9+/]*$/;
const ASCII_WHITESPACE = /[\t\n\f\r ]+/g;

/**
 * Decodes `data:<type>;base64,<data>` (RFC 2397) to image bytes within the limits: base64 only, the
 * declared type one of the allowed four and the same as the type the bytes carry, at most MAX_IMAGE_BYTES.
 * Base64 is decoded as the Fetch standard's forgiving-base64 does (whitespace ignored, padding optional),
 * but strictly otherwise: Node's own decoder would skip any stray character.
 */
export function parseImageDataUrl(dataUrl: string): { bytes: Buffer; contentType: ImageType } {
  const match = /^data:([^,]*),/i.exec(dataUrl);
  if (!match) throw imageRejected('must be an https URL or a data URL: data:image/png;base64,...');
  const [mime, ...parameters] = match[1].split(';');
  if (parameters.length === 0 || parameters[parameters.length - 1].trim().toLowerCase() !== 'base64') {
    throw imageRejected('data URL must be base64-encoded: data:image/png;base64,...');
  }
  const declared = declaredType(mime);
  if (!declared) throw imageRejected(`data URL declares ${mime.trim() ? `type ${JSON.stringify(mime.trim())}` : 'no type'}; allowed: ${ALLOWED_TEXT} (image/png, image/jpeg, image/gif, image/webp)`);

  let encoded = dataUrl.slice(match[0].length).replace(ASCII_WHITESPACE, '');
  // Refused before decoding: a huge string costs nothing more to look at than its length.
  if (Math.floor((encoded.length * 3) / 4) - 2 > MAX_IMAGE_BYTES) throw tooLarge();
  if (encoded.length % 4 === 0) encoded = encoded.replace(/={1,2}$/, '');
  if (encoded.length % 4 === 1 || !BASE64.test(encoded)) throw imageRejected('data URL is not valid base64');
  if (encoded.length === 0) throw imageRejected('data URL is empty');
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length > MAX_IMAGE_BYTES) throw tooLarge(bytes.length);
  const actual = sniffImageType(bytes);
  if (!actual) throw notAnImage('data');
  if (actual !== declared) throw imageRejected(`data URL declares ${declared} but its bytes are ${actual}; send the type the bytes are`);
  return { bytes, contentType: actual };
}
