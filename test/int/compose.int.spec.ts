import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

// Static checks of the production compose file; `docker compose config -q` runs when the plugin exists.

const ROOT = resolve(__dirname, '..', '..');
const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');

const SERVICES = ['eventstore', 'postgres', 'redis', 'api', 'projector', 'workers', 'gateway'];
const STORES = ['eventstore', 'postgres', 'redis'];
const DOCUMENTED_VARS = ['SOLANA_RPC_URL', 'JUPITER_URL', 'PRICE_URL', 'SERVICE_MASTER_KEY', 'PUBLIC_URL', 'POSTGRES_PASSWORD'];

type Healthcheck = { test?: string | string[]; disable?: boolean };
type PortEntry = string | number | { target?: number | string; published?: number | string };
type Service = {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: PortEntry[];
  deploy?: { replicas?: number };
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: Healthcheck;
  configs?: Array<string | { source: string; target?: string }>;
};
type Compose = {
  services: Record<string, Service>;
  configs?: Record<string, { content?: string; file?: string }>;
  volumes?: Record<string, unknown>;
};

const raw = readFileSync(COMPOSE_FILE, 'utf8');
// merge: true so `<<: *anchor` behaves as in docker compose.
const compose = parse(raw, { merge: true }) as Compose;

function service(name: string): Service {
  const svc = compose.services[name];
  if (!svc) throw new Error(`service ${name} missing from docker-compose.yml`);
  return svc;
}

function envOf(svc: Service): Record<string, string> {
  const env = svc.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const i = entry.indexOf('=');
        return i === -1 ? [entry, ''] : [entry.slice(0, i), entry.slice(i + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v == null ? '' : String(v)]));
}

/** [hostPort, containerPort] pairs; hostPort is null for an ephemeral publish ("8080" alone). */
function publishedPorts(svc: Service): Array<[string | null, string]> {
  return (svc.ports ?? []).map((p) => {
    if (typeof p === 'object') {
      return [p.published == null ? null : String(p.published), String(p.target)];
    }
    const parts = String(p).split('/')[0].split(':');
    const container = parts[parts.length - 1];
    const host = parts.length >= 2 ? parts[parts.length - 2] : null;
    return [host, container];
  });
}

function toSeconds(value: string): number {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };
  let total = 0;
  let matched = '';
  for (const m of value.matchAll(/(\d+)(ms|s|m|h|d)?/g)) {
    total += Number(m[1]) * units[m[2] ?? 's'];
    matched += m[0];
  }
  if (matched !== value) throw new Error(`unparseable nginx time "${value}"`);
  return total;
}

/** Variables docker compose would interpolate: `${NAME...}` and `$NAME`, with `$$` as the escape. */
function interpolatedVariables(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/\$(\$|\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g)) {
    if (m[1] === '$') continue;
    const name = m[3] ?? /^[A-Za-z_][A-Za-z0-9_]*/.exec(m[2] ?? '')?.[0];
    names.push(name ?? m[0]);
  }
  return names;
}

function gatewayNginxConfig(): string {
  const refs = service('gateway').configs ?? [];
  const contents = refs.map((ref) => {
    const source = typeof ref === 'string' ? ref : ref.source;
    const content = compose.configs?.[source]?.content;
    if (typeof content !== 'string') throw new Error(`config ${source} has no inline content`);
    return content;
  });
  expect(contents.length).toBeGreaterThan(0);
  return contents.join('\n');
}

describe('docker-compose.yml (production shape)', () => {
  it('defines the seven services, each with a healthcheck', () => {
    expect(Object.keys(compose.services).sort()).toEqual([...SERVICES].sort());
    for (const name of SERVICES) {
      const hc = service(name).healthcheck;
      expect({ name, hasTest: Boolean(hc?.test) && hc?.disable !== true }).toEqual({ name, hasTest: true });
      const test = Array.isArray(hc?.test) ? hc?.test : [String(hc?.test)];
      expect({ name, test: test[0] }).not.toEqual({ name, test: 'NONE' });
    }
  });

  it('runs api as 2 replicas behind the gateway, gated on healthy stores', () => {
    const api = service('api');
    expect(api.deploy?.replicas).toBe(2);
    expect(publishedPorts(api)).toEqual([]);

    const deps = api.depends_on;
    expect(deps).toBeDefined();
    expect(Array.isArray(deps)).toBe(false);
    for (const store of STORES) {
      expect((deps as Record<string, { condition?: string }>)[store]?.condition).toBe('service_healthy');
    }
  });

  it('points the app processes at the compose stores', () => {
    for (const name of ['api', 'projector', 'workers']) {
      const env = envOf(service(name));
      expect(env.EVENTSTORE_URL).toMatch(/^esdb:\/\//);
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      expect(env.REDIS_URL).toBe('redis://redis:6379');
    }
    const api = envOf(service('api'));
    expect(api.PORT).toBe('8080');
    expect(api.TRUST_PROXY).toBe('1');
    // The stack must refuse to start without a master key rather than run with an empty one.
    expect(api.SERVICE_MASTER_KEY).toMatch(/^\$\{SERVICE_MASTER_KEY:\?/);
    expect(envOf(service('projector')).PROJECTOR_HEALTH_PORT).toBe('9464');
  });

  it('publishes only the gateway, on host port 8080', () => {
    expect(publishedPorts(service('gateway'))).toContainEqual(['8080', '80']);
    for (const name of SERVICES.filter((s) => s !== 'gateway')) {
      expect({ name, ports: publishedPorts(service(name)) }).toEqual({ name, ports: [] });
    }
  });

  it('configures nginx to proxy, upgrade WebSockets and outlast 25 s long-polls', () => {
    const conf = gatewayNginxConfig();
    expect(conf).toMatch(/\bproxy_pass\s+http:\/\//);
    expect(conf).toMatch(/proxy_set_header\s+Upgrade\s+\$+http_upgrade\s*;/);
    expect(conf).toMatch(/proxy_set_header\s+Connection\s+(\$+connection_upgrade|"?upgrade"?)\s*;/i);
    expect(conf).toMatch(/proxy_set_header\s+X-Forwarded-For\s+\$+proxy_add_x_forwarded_for\s*;/);
    expect(conf).toMatch(/location\s+[=^~]*\s*\/ws\b/);

    const timeouts = [...conf.matchAll(/proxy_read_timeout\s+([^;\s]+)\s*;/g)].map((m) => toSeconds(m[1]));
    expect(timeouts.length).toBeGreaterThan(0);
    for (const seconds of timeouts) expect(seconds).toBeGreaterThanOrEqual(35);
  });

  it('builds from Dockerfiles that exist', () => {
    const builds = Object.entries(compose.services).filter(([, svc]) => svc.build !== undefined);
    expect(builds.map(([name]) => name).sort()).toEqual(['api', 'projector', 'workers']);
    for (const [name, svc] of builds) {
      const build = typeof svc.build === 'string' ? { context: svc.build } : svc.build ?? {};
      const context = resolve(ROOT, build.context ?? '.');
      const dockerfile = resolve(context, build.dockerfile ?? 'Dockerfile');
      expect({ name, dockerfile: existsSync(dockerfile) }).toEqual({ name, dockerfile: true });
    }
  });

  it('interpolates only the documented variables', () => {
    const unknown = interpolatedVariables(raw).filter((name) => !DOCUMENTED_VARS.includes(name));
    expect([...new Set(unknown)]).toEqual([]);
  });

  it('passes `docker compose config` when the compose plugin is available', () => {
    const probe = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8', timeout: 15_000 });
    if (probe.error || probe.status !== 0) {
      const reason = (probe.error?.message ?? (probe.stderr || probe.stdout || `exit ${probe.status}`)).trim().split('\n')[0];
      console.info(`skipping \`docker compose config -q\`: docker compose plugin not available (${reason})`);
      return;
    }
    const result = spawnSync('docker', ['compose', '-f', COMPOSE_FILE, 'config', '-q'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, SERVICE_MASTER_KEY: randomBytes(32).toString('base64') },
    });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
  }, 90_000);
});
