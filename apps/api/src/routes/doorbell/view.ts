import type { Doorbell } from '@svc/vault';

/** A doorbell as its owner sees it: never the secret, only whether there is one. */
export function doorbellView(doorbell: Doorbell) {
  return {
    id: doorbell.id,
    url: doorbell.url,
    kinds: doorbell.kinds,
    has_secret: doorbell.hasSecret,
    muted: doorbell.muted,
    failures: doorbell.failures,
    created_at: doorbell.createdAt,
  };
}
