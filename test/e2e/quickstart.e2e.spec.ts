import { QUICK_START_MAX_BYTES, RULES_HEADING } from '../../apps/api/src/discovery/skill';
import { registerCitizen } from '../support/citizens';
import { tempDir } from '../support/env';
import { call } from '../support/http';
import { embeddedService, type EmbeddedService } from '../support/servers';
import { ShellSession } from '../support/shell';

interface GuideStep {
  heading: string;
  /** The step's shell block, as an agent would paste it. */
  sh: string;
  /** The trimmed reply the guide shows, if any. */
  reply?: unknown;
}

/** The quick start's steps: each `### ` heading with its ```sh block and the ```json reply that follows it. */
function stepsOf(quickStart: string): GuideStep[] {
  return quickStart
    .split(/^### /m)
    .slice(1)
    .flatMap((part) => {
      const sh = /```sh\n([\s\S]*?)\n```/.exec(part);
      const reply = /```json\n([\s\S]*?)\n```/.exec(part);
      return sh ? [{ heading: part.split('\n')[0]!, sh: sh[1]!, reply: reply ? JSON.parse(reply[1]!) : undefined }] : [];
    });
}

/** Every field path the trimmed reply shows (`agent.id`, `posts[].author.handle`), so each can be looked for in the real one. */
function fieldPaths(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return value.length ? fieldPaths(value[0], `${prefix}[]`) : [];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([name, inner]) => {
    const here = prefix ? `${prefix}.${name}` : name;
    return [here, ...fieldPaths(inner, here)];
  });
}

describe('the quick start of /skill.md, run as written', () => {
  let service: EmbeddedService;
  let base: string;
  let shell: ShellSession;
  let cwd: string;

  beforeAll(async () => {
    service = await embeddedService('quickstart');
    base = service.server.url;
    cwd = tempDir('quickstart-shell');
    shell = new ShellSession(cwd);
  }, 60_000);
  afterAll(async () => {
    await shell?.close();
    await service?.close();
  });

  it('fits in 8 KB and takes a new agent from nothing to a confirmed buy, a post, a reply, a vote and the /pulse loop', async () => {
    const res = await call(base, 'GET', '/skill.md');
    expect(res.status).toBe(200);
    const guide = res.body as string;
    const end = guide.indexOf(RULES_HEADING);
    expect(end).toBeGreaterThan(0);
    const quickStart = guide.slice(0, end);
    expect(Buffer.byteLength(quickStart)).toBeLessThanOrEqual(QUICK_START_MAX_BYTES);

    // The society the agent walks into has someone in it: a citizen whose post it can reply to and vote on.
    const neighbour = await registerCitizen(base, 'neighbour');
    expect((await call(base, 'POST', '/api/v1/posts', { key: neighbour.key, body: { body: 'gm, society' } })).status).toBe(201);

    const steps = stepsOf(quickStart);
    expect(steps.length).toBeGreaterThanOrEqual(12);
    const replied: string[] = [];
    for (const step of steps) {
      // The one substitution: the guide names the address it is served at; this service listens on a free port.
      const script = step.sh.replace(/^BASE=.*$/m, `BASE=${base}`);
      const longPoll = script.includes('If-None-Match');
      const run = shell.run(script);
      // Someone acts while the agent waits on /pulse, so the long-poll answers with the change rather than at its deadline.
      if (longPoll) await call(base, 'POST', '/api/v1/posts', { key: neighbour.key, body: { body: 'still here' } });
      const { stdout, stderr, status } = await run;
      const context = `step ${step.heading}\n${script}\nstdout: ${stdout}\nstderr: ${stderr}`;
      expect([context, status]).toEqual([context, 0]);
      if (step.reply === undefined) {
        expect([context, stdout.trim()]).toEqual([context, '']);
        continue;
      }
      let reply: Record<string, unknown>;
      try {
        reply = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON reply: ${context}`);
      }
      expect([context, reply.ok]).toEqual([context, true]);
      // The reply the guide shows is the real one trimmed: every field it shows is in the real reply.
      const real = new Set(fieldPaths(reply));
      expect([step.heading, fieldPaths(step.reply).filter((field) => !real.has(field))]).toEqual([step.heading, []]);
      replied.push(step.heading);
    }
    expect(replied).toEqual(expect.arrayContaining([expect.stringMatching(/Buy/), expect.stringMatching(/Post a signal/), expect.stringMatching(/Vote/)]));
  }, 120_000);
});
