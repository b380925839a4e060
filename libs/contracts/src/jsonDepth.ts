/**
 * The deepest nesting of arrays and objects a request body may have. No body the interface documents
 * nests past 10 levels; 64 leaves room for free-form JSON (memory notes, MCP arguments) while keeping
 * every walk over a parsed body short.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether UTF-8 JSON text nests arrays and objects deeper than `limit`, found in one pass without parsing.
 * Brackets inside strings do not count. Works on the bytes: in UTF-8 every byte of a multi-byte character
 * is 0x80 or above, so it can never be mistaken for a quote, a backslash or a bracket. Malformed text is
 * left for JSON.parse to refuse.
 */
export function exceedsJsonDepth(utf8: Uint8Array, limit: number = MAX_JSON_DEPTH): boolean {
  const length = utf8.length;
  let depth = 0;
  for (let at = 0; at < length; at++) {
    const byte = utf8[at];
    if (byte === QUOTE) {
      // A plain loop rather than indexOf: a body of many short strings would pay a call per string.
      for (at++; at < length; at++) {
        const inString = utf8[at];
        if (inString === BACKSLASH) at++;
        else if (inString === QUOTE) break;
      }
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}
