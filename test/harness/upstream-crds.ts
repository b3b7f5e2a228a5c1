// Upstream OpenKruise's CRDs at the pinned version, as test/prepare.d/05-upstream-crds.sh copies them out of the
// github.com/openkruise/kruise module: the reference the compatibility tests compare our CRDs and schemas with.
// Tests read them only from there, so a fresh clone that ran the README's test command has everything they need.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { projectCacheDir } from './cache.js';

const peerModule = fileURLToPath(new URL('../kruise-peer/', import.meta.url));

/** The kruise version pinned in test/kruise-peer/versions.env, e.g. "v1.9.1". */
export function pinnedKruiseVersion(): string {
  const env = readFileSync(path.join(peerModule, 'versions.env'), 'utf8');
  const match = /^KRUISE_VERSION=(\S+)$/m.exec(env);
  if (!match) throw new Error('test/kruise-peer/versions.env does not set KRUISE_VERSION');
  return match[1]!;
}

/** Where 05-upstream-crds.sh puts the CRDs: CDK8S_KRUISE_UPSTREAM_CRDS, else the cache. */
export function upstreamCrdDir(): string {
  if (process.env.CDK8S_KRUISE_UPSTREAM_CRDS) return process.env.CDK8S_KRUISE_UPSTREAM_CRDS;
  return projectCacheDir('upstream-crds', pinnedKruiseVersion());
}

/** The directory, or an error naming the command that fills it. */
export function preparedUpstreamCrdDir(): string {
  const dir = upstreamCrdDir();
  if (!existsSync(path.join(dir, '.complete'))) {
    throw new Error(
      `upstream OpenKruise ${pinnedKruiseVersion()} CRDs are not in ${dir}; ` +
        'run `bash test/prepare.d/05-upstream-crds.sh` (npm test runs every prepare step)',
    );
  }
  return dir;
}

/** Upstream's CRD of `<plural>.<group>` (one document, parsed). */
export function upstreamCrd(group: string, plural: string): Record<string, any> {
  return parse(readFileSync(path.join(preparedUpstreamCrdDir(), `${group}_${plural}.yaml`), 'utf8')) as Record<string, any>;
}
