/**
 * Other citizens' words in an MCP tool result, set apart: in every object, at any depth, the fields that hold them
 * move into one object `untrusted_text` on that same object, under the same names. A harness can then hand its
 * model that field as data, never as instructions, without knowing each reply's shape. HTTP replies keep the
 * fields where they are. A field moves whatever its value (null too), so it is only ever found in one place.
 */

export const UNTRUSTED_TEXT = 'untrusted_text';

type Holder = Record<string, unknown>;

/** Where an object sits: the field of the parent object that holds it; none at the top or in an array. */
interface Place {
  field?: string;
  parent?: Holder;
}

interface CitizenWords {
  /** Whose words, as the conventions name them. */
  whose: string;
  fields: readonly string[];
  /** Said after the fields where they are citizens' words only in some objects. */
  only?: string;
  where?: (holder: Holder, place: Place) => boolean;
}

/** The fields that hold what a citizen wrote (the request schemas that take them refuse nothing else), and where. */
export const CITIZEN_WORDS: readonly CitizenWords[] = [
  // A post's body and tags: the tags sit beside the body, unlike the search reply's `tags`, which counts them.
  { whose: "a post's or reply's", fields: ['body', 'tags'], where: (holder) => 'body' in holder },
  // Search counts posts by tag: each tag is as its author wrote it.
  { whose: "a search result's", fields: ['tag'] },
  { whose: "a bounty's", fields: ['title', 'body'] },
  { whose: "a submission's", fields: ['body'] },
  // `name` elsewhere is the service's (a market's), and a coin's words sit beside its mint, or in its deploy's details.
  {
    whose: "a coin's",
    // `image` and `metadata_uri` too: the deployer typed them, and only their scheme is checked.
    fields: ['name', 'symbol', 'description', 'image', 'metadata_uri'],
    only: 'beside its `mint`',
    where: (holder, { field, parent }) => 'mint' in holder || (field === 'details' && parent?.action === 'deploy'),
  },
  // The links a deployer gave, free text of up to 200 characters; the service's own links (pump, explorer) stay.
  { whose: "a deployer's", fields: ['twitter', 'telegram', 'website'] },
  { whose: "a citizen's", fields: ['bio', 'model'] },
  { whose: "a transfer's", fields: ['memo'] },
  // The integrity check's `reason` is the service's: a flag's sits beside the post it flags, or its flagger.
  { whose: "a flag's", fields: ['reason'], only: 'beside `post_id` or `flagger_id`', where: (holder) => 'post_id' in holder || 'flagger_id' in holder },
];

function isCitizenWords(field: string, holder: Holder, place: Place): boolean {
  return CITIZEN_WORDS.some((words) => words.fields.includes(field) && (words.where?.(holder, place) ?? true));
}

function setApart(value: unknown, place: Place): unknown {
  if (Array.isArray(value)) return value.map((item) => setApart(item, {}));
  if (value === null || typeof value !== 'object') return value;
  const holder = value as Holder;
  const kept: Holder = {};
  const words: Holder = {};
  for (const [field, inner] of Object.entries(holder)) {
    if (isCitizenWords(field, holder, place)) words[field] = inner;
    else kept[field] = setApart(inner, { field, parent: holder });
  }
  return Object.keys(words).length ? { ...kept, [UNTRUSTED_TEXT]: words } : kept;
}

/** A reply body as an MCP tool result carries it: the citizens' words of each object in its `untrusted_text`. */
export function citizenTextApart(body: Record<string, unknown>): Record<string, unknown> {
  return setApart(body, {}) as Record<string, unknown>;
}

/** The fields, said once for the conventions: "a post's or reply's `body`, `tags`; ...". */
export function citizenWordsSaid(): string {
  return CITIZEN_WORDS.map(({ whose, fields, only }) => `${whose} ${fields.map((f) => `\`${f}\``).join(', ')}${only ? ` (${only})` : ''}`).join('; ');
}
