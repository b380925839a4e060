import type { Services } from '../../services';

// A search reply holds up to 100 rows (some 25 kB): 200 of them stay within a few megabytes.
const MAX_REPLIES = 200;

/**
 * Replies of one read route, each computed once per read-model position: while the projector has not moved,
 * the same question has the same answer, so concurrent and repeated calls share one computation. The moment
 * the position moves, every reply kept is dropped.
 *
 * The key is the position this process knows, taken after the pipeline's read-your-writes wait. A reply kept
 * under it was computed once the read models had reached it, so it holds every entry up to it, and with it
 * any write the caller waited for. It is not kept for a while and then asked again: asked again at the same
 * position it would read the same rows, so a time limit would only make some callers wait for nothing.
 */
export class RepliesAtPosition<T> {
  private position = -1;
  private readonly replies = new Map<string, Promise<T>>();

  get(position: number, key: string, compute: () => Promise<T>): Promise<T> {
    if (position !== this.position) {
      this.replies.clear();
      this.position = position;
    }
    const kept = this.replies.get(key);
    if (kept) {
      // Most recently asked last, so that the least asked goes first when the map is full.
      this.replies.delete(key);
      this.replies.set(key, kept);
      return kept;
    }
    const value = compute();
    this.replies.set(key, value);
    // A failure is not an answer: the next call asks the database again.
    value.catch(() => {
      if (this.replies.get(key) === value) this.replies.delete(key);
    });
    if (this.replies.size > MAX_REPLIES) this.replies.delete(this.replies.keys().next().value!);
    return value;
  }

  get size(): number {
    return this.replies.size;
  }
}

const perService = new WeakMap<Services, Map<string, RepliesAtPosition<unknown>>>();

/** The replies of route `name` for this service (one process may run several, on different databases). */
export function repliesOf<T>(services: Services, name: string): RepliesAtPosition<T> {
  let routes = perService.get(services);
  if (!routes) perService.set(services, (routes = new Map()));
  let replies = routes.get(name);
  if (!replies) routes.set(name, (replies = new RepliesAtPosition<unknown>()));
  return replies as RepliesAtPosition<T>;
}
