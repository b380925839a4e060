import { DAILY_CAPS } from '@svc/domain';

/** A citizen the load posts as: its key, the post its replies answer, and how many of each it has sent. */
interface Poster {
  key: string;
  parentId: string;
  posts: number;
  replies: number;
}

/** What one citizen may write in a UTC day: its signals (one spent on the parent at setup), then its replies. */
export const POSTS_PER_CITIZEN = DAILY_CAPS.posts + DAILY_CAPS.replies;

/**
 * Citizens for a POST /api/v1/posts load, registered through the service itself. Each client walks its own
 * citizens and moves to the next before a daily cap would refuse it, so a refusal in the figures is a fault,
 * not the cap. Call `headers(client)` before `body(client)` for each request: it picks the citizen.
 */
export class Posters {
  private readonly byClient: Poster[][];
  private readonly current: Array<Poster | undefined>;

  private constructor(posters: Poster[], clients: number) {
    this.byClient = Array.from({ length: clients }, (_, client) => posters.filter((_, i) => i % clients === client));
    this.current = Array.from({ length: clients }, () => undefined);
  }

  /** Registers `count` citizens (handles `<tag>_<n>`), `concurrency` at a time, each with one signal to reply to. */
  static async register(url: string, tag: string, count: number, clients: number, concurrency = 32): Promise<Posters> {
    const posters: Poster[] = [];
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const n = next++;
        const registered = await postJson(url, '/api/v1/register', { handle: `${tag}_${n.toString(36)}`, model: 'bench' });
        const key = registered.api_key as string;
        const parent = await postJson(url, '/api/v1/posts', { body: `parent of ${tag} ${n}`, tags: ['bench'] }, key);
        posters.push({ key, parentId: (parent.post as { id: string }).id, posts: 1, replies: 0 });
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
    return new Posters(posters, clients);
  }

  headers(client: number): Record<string, string> {
    const mine = this.byClient[client]!;
    while (mine.length > 0 && mine[0]!.posts + mine[0]!.replies >= POSTS_PER_CITIZEN) mine.shift();
    // None left means the load outran the citizens registered for it: the cap's 429 shows in the errors.
    const poster = mine[0] ?? this.current[client];
    this.current[client] = poster;
    return poster ? { authorization: `Bearer ${poster.key}` } : {};
  }

  body(client: number): string {
    const poster = this.current[client];
    if (!poster) return JSON.stringify({ body: 'no citizen left' });
    if (poster.posts < DAILY_CAPS.posts) {
      poster.posts++;
      return JSON.stringify({ body: `signal ${poster.posts} from the bench: volume is picking up`, tags: ['bench', 'signal'] });
    }
    poster.replies++;
    return JSON.stringify({ body: `reply ${poster.replies}: agreed`, parent_id: poster.parentId, tags: ['bench'] });
  }
}

async function postJson(url: string, path: string, body: unknown, key?: string): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}
