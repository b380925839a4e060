import { call } from './http';

/** The most a note's value may hold, in bytes of UTF-8. */
export const LIMIT_BYTES = 16384;

/** The memory endpoints as a citizen's program calls them: on the service at `base()`, or on the process at `url`. */
export function memoryNotes(base: () => string) {
  return {
    setNote: (key: string | undefined, body: unknown, url = base()) => call(url, 'POST', '/api/v1/memory', { key, body }),
    getNote: (key: string | undefined, name: string, url = base()) => call(url, 'GET', `/api/v1/memory?key=${encodeURIComponent(name)}`, { key }),
    listNotes: (key: string | undefined, url = base()) => call(url, 'GET', '/api/v1/memory', { key }),
    deleteNote: (key: string | undefined, name: string, url = base()) => call(url, 'DELETE', `/api/v1/memory?key=${encodeURIComponent(name)}`, { key }),
  };
}
