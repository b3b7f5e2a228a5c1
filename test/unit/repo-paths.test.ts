// A clone holds only the repository: code, tests, benchmarks and scripts must not reach for files beside it
// (a shared folder one machine happens to have) or in one machine's home directory. What lives outside the
// repository is found through the documented cache variables (XDG_CACHE_HOME or $HOME/.cache, GOMODCACHE,
// CDK8S_KRUISE_* and the assets variables), never through a spelled-out path.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCANNED = ['src', 'test', 'bench', 'scripts', '.ci', 'constructs', 'examples'];
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|sh|bash|json|ya?ml|md|env|mod)$|^run$|^Dockerfile$/;

/**
 * A reference to a place outside the repository. `/root` and `/home/nonroot` alone are directories inside the
 * runtime image (src/image), not on a machine; below them is a machine's home.
 */
const OUTSIDE: readonly { name: string; pattern: RegExp }[] = [
  { name: 'the shared folder beside the checkout', pattern: /\.\.\/shared\b|\bshared\/reference\b/ },
  { name: 'a joined path above the repository root', pattern: /\b(?:repoRoot|ROOT|root|repo)\s*,\s*['"`]\.\.(?:[/'"`])/ },
  { name: "root's home directory", pattern: /(?<![\w.-])\/root\/[\w.]/ },
  { name: "a user's home directory", pattern: /(?<![\w.-])\/home\/(?!nonroot\b)[\w.-]+/ },
  { name: 'a macOS home directory', pattern: /(?<![\w.-])\/Users\/[\w.-]+/ },
  { name: 'the work folder of a machine', pattern: /(?<![\w.-])\/work\/[\w.-]+/ },
];

function files(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    if (name === 'node_modules' || name === '.git') return [];
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return TEXT.test(name) ? [full] : [];
  });
}

/** `file:line: what` for every line of `text` that points outside the repository. */
export function outsideReferences(file: string, text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const { name, pattern } of OUTSIDE) if (pattern.test(line)) out.push(`${file}:${i + 1}: ${name}: ${line.trim().slice(0, 160)}`);
  });
  return out;
}

describe('nothing refers to a path outside the repository', () => {
  const topLevel = readdirSync(ROOT)
    .map((n) => path.join(ROOT, n))
    .filter((f) => statSync(f).isFile() && TEXT.test(path.basename(f)));
  const scanned = [...topLevel, ...SCANNED.flatMap((d) => files(path.join(ROOT, d)))].filter((f) => f !== import.meta.filename);

  it('scans the folders the README commands run from', () => {
    expect(scanned.length).toBeGreaterThan(100);
    expect(scanned.some((f) => f.endsWith(path.join('.ci', 'run')))).toBe(true);
  });

  it('finds no such path', () => {
    const found = scanned.flatMap((f) => outsideReferences(path.relative(ROOT, f), readFileSync(f, 'utf8')));
    expect(found, 'use a documented cache variable (XDG_CACHE_HOME, CDK8S_KRUISE_*) or a file inside the repository').toEqual([]);
  });

  it.each([
    ["resolve(repoRoot, '../shared/reference/openkruise-crds')", 'the shared folder beside the checkout'],
    ["path.resolve(repoRoot, '..', 'x')", 'a joined path above the repository root'],
    ['cp /root/.cache/cdk8s-kruise/x .', "root's home directory"],
    ['KUBEBUILDER_ASSETS=/home/alice/assets', "a user's home directory"],
    ['open /Users/alice/src', 'a macOS home directory'],
    ['cd /work/main && npm test', 'the work folder of a machine'],
  ])('catches %s', (line, name) => {
    expect(outsideReferences('f', line)).toContain(`f:1: ${name}: ${line}`);
  });

  it.each([
    "{ kind: 'dir', path: '/root', mode: 0o700 }",
    "home: '/home/nonroot'",
    'out="${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/kubeconform"',
    "path.resolve(import.meta.dirname, '../..')",
    "new URL('../kruise-peer/', import.meta.url)",
  ])('lets %s through', (line) => {
    expect(outsideReferences('f', line)).toEqual([]);
  });
});
