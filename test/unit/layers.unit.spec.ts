import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** The README's table of packages: each package and the `@svc/` packages it may import. */
function allowedImports(): Map<string, Set<string>> {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## How it is built'));
  const allowed = new Map<string, Set<string>>();
  for (const row of section.split('\n').filter((line) => /^\| `(libs|apps)\/[a-z]+`|^\| `projections\/`/.test(line))) {
    const cells = row.split('|').map((cell) => cell.trim());
    const dir = cells[1]!.replace(/`/g, '').replace(/\/$/, '');
    const names = [...cells[3]!.matchAll(/`([a-z/]+)`/g)].map((m) => m[1]!);
    allowed.set(dir, new Set(names));
  }
  return allowed;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** What a package imports: the `@svc/` names (an app's is `app-<name>`), and any relative path that leaves it. */
function importsOf(dir: string): { packages: Set<string>; escapes: string[] } {
  const packages = new Set<string>();
  const escapes: string[] = [];
  const root = path.join(ROOT, dir);
  for (const file of sourceFiles(root)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from|import\(|require\()\s*'([^']+)'/g)) {
      const spec = match[1]!;
      if (spec.startsWith('@svc/')) packages.add(spec.slice('@svc/'.length));
      else if (spec.startsWith('.') && !path.resolve(path.dirname(file), spec).startsWith(root + path.sep)) escapes.push(`${path.relative(ROOT, file)}: ${spec}`);
    }
  }
  return { packages, escapes };
}

describe('the packages and what each may import (README, How it is built)', () => {
  const allowed = allowedImports();

  it('lists every package of the workspace', () => {
    const packages = ['libs', 'apps'].flatMap((top) => fs.readdirSync(path.join(ROOT, top)).map((name) => `${top}/${name}`));
    expect([...allowed.keys()].sort()).toEqual([...packages, 'projections'].sort());
  });

  it.each([...allowedImports().keys()])('%s imports only what the table allows, and reaches outside itself only through packages', (dir) => {
    const { packages, escapes } = importsOf(dir);
    const own = dir === 'projections' ? 'projections' : dir.split('/')[1]!;
    const refused = [...packages].filter((name) => name !== own && !allowed.get(dir)!.has(name));
    expect({ dir, refused, escapes }).toEqual({ dir, refused: [], escapes: [] });
  });
});
