import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { table } from './report';

/**
 * A V8 CPU profile of this process over one stretch (the soak's measured minutes, not its setup), through the
 * inspector: the service runs in this process, so this is the service's profile. Returns the function that
 * stops it and writes `file`.
 */
export async function startCpuProfile(file: string): Promise<() => Promise<string>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // 1 ms between samples: enough detail for a stretch of minutes without a profile of hundreds of MB.
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(profile));
    return file;
  };
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface FunctionTime {
  name: string;
  /** Where it is: the package under node_modules, the project folder, or node's own. */
  where: string;
  selfMs: number;
  totalMs: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time by where the code lives: a package, a project folder, node internals, GC, idle. */
  byPlace: Array<{ where: string; selfMs: number }>;
  functions: FunctionTime[];
}

/** `node_modules/.pnpm/x/node_modules/@scope/pkg/...` → `@scope/pkg`; `/repo/libs/ledger/src/...` → `libs/ledger`. */
export function placeOf(url: string): string {
  if (!url) return 'node (native, GC, idle)';
  if (url.startsWith('node:')) return 'node internals';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const [first, second] = url.slice(modules + 'node_modules/'.length).split('/');
    return first?.startsWith('@') ? `${first}/${second}` : (first ?? url);
  }
  const project = /\/(apps|libs|scripts|test|projections)\/([^/]+)/.exec(url);
  return project ? `${project[1]}/${project[2]}` : url;
}

/**
 * Self time (samples whose top frame is the function) and inclusive time (samples with the function anywhere on
 * the stack, counted once however deep it recurses) by function, from a .cpuprofile: of every sample, or of the
 * samples `from` (inclusive) to `to` (exclusive).
 */
export function summarizeProfile(profile: Profile, from = 0, to = profile.samples.length): ProfileSummary {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const keyOf = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url}:${n.callFrame.lineNumber + 1}`;
  const selfByNode = new Map<number, number>();
  let totalMs = 0;
  for (let i = from; i < to; i++) {
    const id = profile.samples[i]!;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    totalMs += ms;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + ms);
  }
  const functions = new Map<string, FunctionTime>();
  const entry = (n: ProfileNode) => {
    const key = keyOf(n);
    let f = functions.get(key);
    if (!f) functions.set(key, (f = { name: `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`, where: placeOf(n.callFrame.url), selfMs: 0, totalMs: 0 }));
    return f;
  };
  for (const [id, ms] of selfByNode) {
    const top = nodes.get(id)!;
    entry(top).selfMs += ms;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = nodes.get(at)!;
      const key = keyOf(n);
      if (seen.has(key)) continue;
      seen.add(key);
      entry(n).totalMs += ms;
    }
  }
  const places = new Map<string, number>();
  for (const f of functions.values()) places.set(f.where, (places.get(f.where) ?? 0) + f.selfMs);
  return {
    totalMs,
    byPlace: [...places].map(([where, selfMs]) => ({ where, selfMs })).sort((a, b) => b.selfMs - a.selfMs),
    functions: [...functions.values()],
  };
}

export interface BusyStretch {
  /** From the start of the profile, ms. */
  startMs: number;
  durationMs: number;
  from: number;
  to: number;
}

/**
 * The longest runs of consecutive samples with no idle one among them: the event loop never got back to its
 * poll in that time, so a run far longer than a request is one task (or a chain of microtasks) holding the loop.
 */
export function busyStretches(profile: Profile, count: number): BusyStretch[] {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const stretches: BusyStretch[] = [];
  let at = 0;
  let open: BusyStretch | undefined;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    at += ms;
    if (idle.has(id)) {
      if (open) stretches.push(open);
      open = undefined;
    } else {
      open ??= { startMs: at - ms, durationMs: 0, from: i, to: i };
      open.durationMs += ms;
      open.to = i + 1;
    }
  });
  if (open) stretches.push(open);
  return stretches.sort((a, b) => b.durationMs - a.durationMs).slice(0, count);
}

/** The longest busy stretches, each with the project's functions and the places that took most of it. */
export function formatStretches(profile: Profile, count: number, top: number): string {
  const out = [`the ${count} longest stretches with no idle sample (the loop held):`];
  for (const stretch of busyStretches(profile, count)) {
    const summary = summarizeProfile(profile, stretch.from, stretch.to);
    const project = summary.functions.filter((f) => /^(apps|libs|projections)\//.test(f.where)).sort((a, b) => b.totalMs - a.totalMs);
    out.push(
      `  at ${(stretch.startMs / 1000).toFixed(1)} s, ${stretch.durationMs.toFixed(0)} ms:`,
      `    places: ${summary.byPlace.slice(0, top).map((p) => `${p.where} ${p.selfMs.toFixed(0)}`).join(', ')}`,
      ...project.slice(0, top).map((f) => `    ${f.totalMs.toFixed(0).padStart(6)} ms  ${f.name}`),
    );
  }
  return out.join('\n');
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const project = /\/((?:apps|libs|scripts|test|projections)\/.*)$/.exec(url);
  return project ? project[1]! : url.replace(/^file:\/\//, '');
}

/** Where a run's CPU went: by place, the top functions by self time, and the top by inclusive time (all, and the project's own). */
export function formatProfile(summary: ProfileSummary, top: number): string {
  const pct = (ms: number) => `${((ms / summary.totalMs) * 100).toFixed(1)}%`;
  const rows = (list: FunctionTime[], pick: (f: FunctionTime) => number) =>
    list
      .sort((a, b) => pick(b) - pick(a))
      .slice(0, top)
      .map((f) => [f.name, f.where, pick(f).toFixed(0), pct(pick(f))]);
  const project = summary.functions.filter((f) => /^(apps|libs|projections)\//.test(f.where));
  return [
    `CPU profile: ${(summary.totalMs / 1000).toFixed(1)} s sampled`,
    '',
    'self time by place:',
    table(['place', '', 'self ms', 'share'], summary.byPlace.slice(0, top).map((p) => [p.where, '', p.selfMs.toFixed(0), pct(p.selfMs)])),
    '',
    `top ${top} functions by self time:`,
    table(['function', 'place', 'self ms', 'share'], rows([...summary.functions], (f) => f.selfMs)),
    '',
    `top ${top} functions by inclusive time:`,
    table(['function', 'place', 'total ms', 'share'], rows([...summary.functions], (f) => f.totalMs)),
    '',
    `top ${top} of the project's own functions (apps/, libs/, projections/) by inclusive time:`,
    table(['function', 'place', 'total ms', 'share'], rows(project, (f) => f.totalMs)),
  ].join('\n');
}

/**
 * Where the self time of function `name` comes from: for each sample it tops, its nearest `depth` callers outside
 * node's internals and native code, innermost first, with the ms they add up to.
 */
export function formatCallers(profile: Profile, name: string, depth: number, top: number): string {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const stacks = new Map<string, number>();
  let totalMs = 0;
  profile.samples.forEach((id, i) => {
    if (nodes.get(id)!.callFrame.functionName !== name) return;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    totalMs += ms;
    const frames: string[] = [];
    for (let at = parent.get(id); at !== undefined && frames.length < depth; at = parent.get(at)) {
      const { functionName, url } = nodes.get(at)!.callFrame;
      if (!url || url.startsWith('node:')) continue;
      frames.push(`${functionName || '(anonymous)'} ${shortUrl(url)}`);
    }
    const key = frames.join(' < ') || '(no caller outside node)';
    stacks.set(key, (stacks.get(key) ?? 0) + ms);
  });
  const rows = [...stacks].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [`${name}: ${totalMs.toFixed(0)} ms of self time, by caller:`, ...rows.map(([stack, ms]) => `  ${ms.toFixed(0).padStart(7)} ms  ${stack}`)].join('\n');
}

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/**
 * V8's sampling heap profiler over one stretch: at its end it holds the sampled allocations still alive, by the
 * stack that made them, so memory that grows over the stretch shows with where it was allocated. Returns the
 * function that stops it, writes `file` and returns the profile's root.
 */
export async function startHeapSampling(file: string): Promise<() => Promise<HeapNode>> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  // One sample per 64 KB allocated on average: cheap enough to leave on for minutes of load.
  await session.post('HeapProfiler.startSampling', { samplingInterval: 65_536 });
  return async () => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(profile));
    return profile.head as HeapNode;
  };
}

/** The live sampled memory by place and by allocating function (self), and by the project's functions (inclusive). */
export function formatHeap(head: HeapNode, top: number): string {
  const self = new Map<string, { where: string; bytes: number }>();
  const inclusive = new Map<string, number>();
  const places = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, stack: Set<string>): number => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`;
    const where = placeOf(url);
    total += node.selfSize;
    const mine = self.get(name) ?? { where, bytes: 0 };
    mine.bytes += node.selfSize;
    self.set(name, mine);
    places.set(where, (places.get(where) ?? 0) + node.selfSize);
    const inner = new Set(stack).add(name);
    const subtree = node.selfSize + node.children.reduce((sum, child) => sum + walk(child, inner), 0);
    // Counted once per stack however deep it recurses: only where the function first appears.
    if (!stack.has(name) && /^(apps|libs|projections)\//.test(where)) inclusive.set(name, (inclusive.get(name) ?? 0) + subtree);
    return subtree;
  };
  walk(head, new Set());
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  const pct = (bytes: number) => `${((bytes / total) * 100).toFixed(1)}%`;
  return [
    `live sampled heap at the end of the stretch: ${mb(total)} MB`,
    table(['place', '', 'MB', 'share'], [...places].sort((a, b) => b[1] - a[1]).slice(0, top).map(([where, bytes]) => [where, '', mb(bytes), pct(bytes)])),
    '',
    `top ${top} allocating functions (self):`,
    table(['function', 'place', 'MB', 'share'], [...self].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top).map(([name, f]) => [name, f.where, mb(f.bytes), pct(f.bytes)])),
    '',
    `top ${top} of the project's functions by live memory allocated under them:`,
    table(['function', '', 'MB', 'share'], [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, bytes]) => [name, '', mb(bytes), pct(bytes)])),
  ].join('\n');
}
