/**
 * The constructs entry points and the cdk8s-plus each is built against (package.json "exports"). The sources
 * import cdk8s-plus-27; the package build (scripts/build-package.ts) makes each built entry load its
 * cdk8s-plus through a small CommonJS file (`peers/<cdk8s-plus>.cjs`) that, when the app lacks that peer,
 * throws {@link missingPlusPeerError} instead of a bare "Cannot find module".
 */
export const PLUS_ENTRY_POINTS = {
  'cdk8s-plus-27': 'cdk8s-kruise/constructs',
  'cdk8s-plus-33': 'cdk8s-kruise/constructs/plus-33',
} as const;

export type PlusPackage = keyof typeof PLUS_ENTRY_POINTS;

const PLUS_PACKAGES = Object.keys(PLUS_ENTRY_POINTS) as PlusPackage[];

export function isPlusPackage(name: string): name is PlusPackage {
  return Object.hasOwn(PLUS_ENTRY_POINTS, name);
}

/**
 * What an app that imports the entry built against `plus` is told when `plus` is missing.
 * @param installed the other cdk8s-plus packages the app has
 */
export function missingPlusPeerMessage(plus: PlusPackage, installed: readonly PlusPackage[]): string {
  const head = `${PLUS_ENTRY_POINTS[plus]} is built against ${plus}, which is not installed`;
  const [other] = installed;
  if (other) return `${head}; this app has ${installed.join(' and ')}: import from '${PLUS_ENTRY_POINTS[other]}'`;
  const alternatives = PLUS_PACKAGES.filter((p) => p !== plus).map((p) => `${p} and '${PLUS_ENTRY_POINTS[p]}'`);
  return `${head}, nor is any other cdk8s-plus: install it (npm install ${plus}), or use ${alternatives.join(' or ')}`;
}

/** The part of `require` the check uses (the loading module's own, so test runners' module registries are respected). */
export interface PeerResolver {
  resolve(id: string): string;
}

function resolvable(require: PeerResolver, name: string): boolean {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * The error to throw when loading `plus` failed with `error`: the message above when `plus` itself cannot be
 * found from the loading module, else `error` unchanged (a broken install of the peer, a missing dependency of it).
 */
export function missingPlusPeerError(plus: string, error: unknown, require: PeerResolver): unknown {
  if (!isPlusPackage(plus) || (error as { code?: unknown } | null)?.code !== 'MODULE_NOT_FOUND' || resolvable(require, plus)) return error;
  const installed = PLUS_PACKAGES.filter((p) => p !== plus && resolvable(require, p));
  return new Error(missingPlusPeerMessage(plus, installed), { cause: error });
}

/**
 * The CommonJS file through which a built entry loads `plus`. `module.exports = require(…)` stays a literal
 * re-export so Node's ES module loader sees the peer's named exports; the `try` before it loads the peer first,
 * so a missing one fails there, with the message.
 */
export function plusPeerLoaderSource(plus: PlusPackage, checkFile: string): string {
  const id = JSON.stringify(plus);
  return [
    "'use strict';",
    `// Loads ${plus}, the optional peer ${PLUS_ENTRY_POINTS[plus]} is built against; when it is missing the error names`,
    '// the entry point built against the cdk8s-plus the app has.',
    'try {',
    `  require(${id});`,
    '} catch (error) {',
    `  throw require(${JSON.stringify(checkFile)}).missingPlusPeerError(${id}, error, require);`,
    '}',
    `module.exports = require(${id});`,
    '',
  ].join('\n');
}
