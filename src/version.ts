import { readFileSync } from 'node:fs';

let cached: string | undefined;

/**
 * The version of this package, read once from its package.json (works from `src/` under tsx and from the
 * built bundles: `lib/<format>/` entries and `lib/<format>/chunks/`).
 */
export function packageVersion(): string {
  if (cached) return cached;
  for (const rel of ['../package.json', '../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'cdk8s-kruise' && pkg.version) return (cached = pkg.version);
    } catch {
      // try the next candidate location
    }
  }
  throw new Error('cdk8s-kruise: cannot find its own package.json');
}
