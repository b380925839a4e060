import type { RequestOf, deployBody } from '@svc/contracts';
import type { MediaStore } from '@svc/vault';
import { defaultImageFetcher, type ImageFetcher } from './fetchImage';
import { imageRejected, parseImageDataUrl, type ImageType } from './image';

/** Where a hosted object is served; the route `GET /api/v1/media/{sha256}` answers it. */
export const MEDIA_PATH = '/api/v1/media';

/** The part of the service hosting needs: the media store and the public base URL (PUBLIC_URL). */
export interface MediaServices {
  media: MediaStore;
  config: { publicUrl: string };
}

/** The deploy request's fields that go into the coin's metadata. */
export type DeployMetadataInput = Pick<RequestOf<typeof deployBody>, 'name' | 'symbol' | 'description' | 'image' | 'twitter' | 'telegram' | 'website'>;

export interface HostingOptions {
  /** Fetches https images; the default refuses every non-public address, loopback included. */
  fetcher?: ImageFetcher;
}

/** The metadata JSON a launch venue's UI reads, in the shape pump.fun itself hosts. */
export interface TokenMetadata {
  name: string;
  symbol: string;
  description: string;
  image: string;
  showName: true;
  createdOn: string;
  twitter?: string;
  telegram?: string;
  website?: string;
}

export function mediaUrl(baseUrl: string, sha256: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${MEDIA_PATH}/${sha256}`;
}

/**
 * Takes the image in (decoded from a data URL, or fetched from an https URL through the SSRF-safe agent),
 * checks it is a png, jpg, gif or webp of at most 4 MB by its bytes, and stores it. Every refusal is a
 * `Rejected` invalid_request naming `image`.
 */
export async function hostImage(services: Pick<MediaServices, 'media'>, image: string, options: HostingOptions = {}): Promise<{ sha256: string; contentType: ImageType }> {
  let taken: { bytes: Buffer; contentType: ImageType };
  if (/^data:/i.test(image)) taken = parseImageDataUrl(image);
  else if (/^[a-z][a-z0-9+.-]*:/i.test(image)) taken = await (options.fetcher ?? defaultImageFetcher()).fetch(image);
  else throw imageRejected('must be an https URL or a base64 data URL (data:image/png;base64,...)');
  const { sha256 } = await services.media.put(taken.bytes, taken.contentType);
  return { sha256, contentType: taken.contentType };
}

/** The metadata document for a coin; optional links left out when absent or empty. */
export function tokenMetadata(input: Omit<DeployMetadataInput, 'image'>, imageUri: string, createdOn: string): TokenMetadata {
  const links: Partial<Pick<TokenMetadata, 'twitter' | 'telegram' | 'website'>> = {};
  for (const link of ['twitter', 'telegram', 'website'] as const) {
    const value = input[link]?.trim();
    if (value) links[link] = value;
  }
  return { name: input.name, symbol: input.symbol, description: input.description ?? '', image: imageUri, showName: true, createdOn, ...links };
}

/**
 * Hosts the image and then the metadata JSON pointing at it, both content-addressed under `baseUrl`. The
 * same request hosts the same bytes at the same URLs, so a retried deploy proposes the same `metadata_uri`.
 */
export async function hostMetadata(
  services: Pick<MediaServices, 'media'>,
  input: DeployMetadataInput,
  baseUrl: string,
  options: HostingOptions = {},
): Promise<{ metadata_uri: string; image_uri: string }> {
  const image = await hostImage(services, input.image, options);
  const imageUri = mediaUrl(baseUrl, image.sha256);
  const json = Buffer.from(JSON.stringify(tokenMetadata(input, imageUri, baseUrl.replace(/\/+$/, ''))), 'utf8');
  const metadata = await services.media.put(json, 'application/json');
  return { metadata_uri: mediaUrl(baseUrl, metadata.sha256), image_uri: imageUri };
}

/** What the deploy command calls when the request has no `metadata_uri`: hosting under PUBLIC_URL. */
export async function hostDeployMetadata(
  services: MediaServices,
  input: DeployMetadataInput,
  options: HostingOptions = {},
): Promise<{ metadata_uri: string; image: string }> {
  const hosted = await hostMetadata(services, input, services.config.publicUrl, options);
  return { metadata_uri: hosted.metadata_uri, image: hosted.image_uri };
}
