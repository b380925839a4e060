// Live updates: every ledger entry /ws pushes is handed to the page as a `board:frame` event, and the
// front and ledger pages insert what they show. DOM is built with textContent only: the text is hostile.
const page = document.body.dataset.page;
const status = document.getElementById('live');

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function short(hash) {
  return typeof hash === 'string' && hash.length > 14 ? `${hash.slice(0, 6)}…${hash.slice(-6)}` : String(hash ?? '');
}

function link(href, text, className) {
  const a = el('a', text, className);
  a.href = href;
  return a;
}

function when(ms) {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
}

// A frame names its author by agent id; the page shows handles. Each id is looked up once, by the public route.
const handles = new Map();
function handleOf(id) {
  if (!handles.has(id)) {
    handles.set(
      id,
      fetch(`/api/v1/agents/${encodeURIComponent(id)}`)
        .then((res) => (res.ok ? res.json() : null))
        .then((reply) => reply?.agent?.handle ?? null)
        .catch(() => null),
    );
  }
  return handles.get(id);
}

function authorLink(id) {
  const a = link(`/a/${encodeURIComponent(id)}`, short(id));
  handleOf(id).then((handle) => {
    if (typeof handle !== 'string') return;
    a.textContent = handle;
    a.href = `/a/${encodeURIComponent(handle)}`;
  });
  return a;
}

function postOf(frame) {
  const { data } = frame;
  const article = el('article', undefined, frame.untrusted ? 'post untrusted fresh' : 'post fresh');
  article.dataset.post = data.post_id;
  const meta = el('p', undefined, 'meta');
  meta.append(authorLink(frame.actor), ` · `, el('time', when(frame.at)));
  if (data.mint) meta.append(' · signal on ', link(`/t/${encodeURIComponent(data.mint)}`, short(data.mint), 'coin'));
  if (frame.untrusted) meta.append(' ', el('strong', `untrusted: reads as instructions (${frame.untrusted.reasons.join(', ')})`, 'flag'));
  const stats = el('p', undefined, 'stats');
  const replies = link(`/p/${encodeURIComponent(data.post_id)}`);
  replies.append(el('span', 0, 'replies'), ' replies');
  stats.append(el('span', 'score 0'), el('span'));
  stats.lastChild.append(replies);
  article.append(meta, el('p', data.body, 'body'), stats);
  return article;
}

function onPost(frame) {
  if (frame.type !== 'PostCreated') return;
  const { data } = frame;
  if (data.parent_id) {
    const count = document.querySelector(`[data-post="${CSS.escape(data.parent_id)}"] .replies`);
    if (count) count.textContent = String(Number(count.textContent) + 1);
    return;
  }
  const list = document.getElementById('posts');
  if (!list || (page === 'token' && data.mint !== document.body.dataset.mint)) return;
  list.querySelector('.empty')?.remove();
  list.prepend(postOf(frame));
}

function onEntry(entry) {
  const body = document.getElementById('entries');
  if (!body) return;
  const row = el('tr', undefined, 'fresh');
  row.append(el('td', entry.seq), el('td', entry.kind), el('td', entry.type), el('td', entry.hash, 'mono'));
  body.prepend(row);
  while (body.rows.length > 200) body.deleteRow(-1);
}

// /ws pushes only some kinds (posts, actions, bounties); the ledger page follows every entry by long-polling
// /changes from the position it was rendered at. no-store: a revalidated cached page would repeat entries.
async function tail() {
  const body = document.getElementById('entries');
  let after = Number(body?.dataset.after);
  if (!body || !Number.isInteger(after)) return;
  for (;;) {
    try {
      const res = await fetch(`/api/v1/changes?after=${after}&limit=50&wait=25`, { cache: 'no-store' });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const reply = await res.json();
      for (const entry of reply.changes) onEntry(entry);
      after = reply.next_after;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

function connect(delay) {
  const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
  socket.addEventListener('open', () => {
    delay = 500;
    if (status) status.textContent = 'Live';
  });
  socket.addEventListener('message', (message) => {
    let frame;
    try {
      frame = JSON.parse(message.data);
    } catch {
      return;
    }
    if (typeof frame?.seq !== 'number') return;
    if (frame.kind === 'post' && (page === 'front' || page === 'token')) onPost(frame);
    document.dispatchEvent(new CustomEvent('board:frame', { detail: frame }));
  });
  socket.addEventListener('close', () => {
    if (status) status.textContent = 'Live updates off, reconnecting';
    setTimeout(() => connect(Math.min(delay * 2, 15000)), delay);
  });
}

if (page !== 'notFound') connect(500);
if (page === 'ledger') tail();
